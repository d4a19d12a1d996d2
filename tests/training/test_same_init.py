"""Every objective starts from the same weights at a seed (issue 28): the vocabulary does not depend on
the negatives, and the prompt token is drawn after every shared weight. Eq. 1/2 see every candidate."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_prompt_token_leaves_every_shared_weight_unchanged():
    from hardneg.models.trainable import TinyTemporal, build_vocabulary

    vocab = build_vocabulary(["a red square moves left"])
    torch.manual_seed(3)
    plain = TinyTemporal(vocab).state_dict()
    torch.manual_seed(3)
    prompted = TinyTemporal(vocab, prompt=True).state_dict()
    assert set(prompted) - set(plain) == {"prompt"}
    for k, v in plain.items():
        assert torch.equal(v, prompted[k]), k


def test_vocabulary_and_initial_weights_do_not_depend_on_the_negatives(tmp_path, pairs, word_negatives):
    from hardneg.models.trainable import read_config
    from hardneg.training.trainer import train

    runs = {}
    for objective, negs in (("coarse", None), ("word", str(word_negatives))):
        out = tmp_path / objective
        train("tiny-temporal", pairs, out, objective=objective, negatives=negs, steps=1, batch_size=4, seed=5,
              progress=False, save_every=1)
        runs[objective] = read_config(out)
    assert runs["coarse"]["vocabulary"] == runs["word"]["vocabulary"]


def test_llm_teacher_objectives_take_every_candidate_by_default():
    import numpy as np

    from hardneg.training.data import Negatives
    from hardneg.training.losses import DEFAULT_N
    from hardneg.training.trainer import _sample_negatives

    pool = [f"n{i}" for i in range(10)]  # the llm_teacher generator's k = 10
    negs = Negatives({"c": {"verb": pool}})
    got = _sample_negatives(negs, ["c"], DEFAULT_N, np.random.default_rng(0))
    assert sorted(got[0]) == sorted(pool)
