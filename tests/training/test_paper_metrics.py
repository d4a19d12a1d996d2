"""Issue 50: PoSRank's own evaluation on the world, the negative control's shuffled captions, chance, and the
report's verdicts on the controls (they must be able to say "the effect did NOT show").

* `posrank_ranks` equals a slow reference written from PoSRank Sec. 4 (rank of the true caption among itself
  and the scene's word-level negatives of one part of speech, 1-based, ties against the caption);
* the test scenes' T_i^p are the world's word-level negatives of that part of speech only, each false;
* the `shuffled` row pairs every video with another scene's caption, the same for every seed, and leaves the
  other rows' batches alone;
* chance of PoSRank^p is H(K+1) / (K+1);
* on planted results the report says the positive control shows the effect, and on null results that it does not;
  a shuffled row above chance is called out.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

EXP = Path(__file__).resolve().parents[2] / "experiments" / "training"
sys.path.insert(0, str(EXP))

import training_design as D  # noqa: E402
import training_paper as P  # noqa: E402

TINY = {"train": 16, "val": 9, "test": 12, "batch": 4, "n_per_pos": 1, "dim": 16, "image_size": 8, "lr": 1e-3,
        "posrank_eval": True}


@pytest.fixture(scope="module")
def tiny():
    return D.prepare(TINY, 0, 1, None)


def _texts(data) -> dict[int, str]:
    voc = data.meta["vocabulary"]
    return {i: " ".join(voc[t] for t in row if not voc[t].startswith("<")).replace(" ,", ",")
            for i, row in enumerate(data.a["tokens"])}


def test_posrank_ranks_equal_a_slow_reference(tiny):
    import torch.nn.functional as F

    net = D.make_net(tiny.meta["vocabulary"], 3, {**TINY}, False)
    frames = torch.from_numpy(tiny.a["test_frames"])
    tokens = torch.from_numpy(tiny.a["tokens"])
    got = D.posrank_ranks(net, tiny, "test", frames, tokens, "cls")
    net.eval()
    with torch.no_grad():
        for i in range(len(tiny.a["test_caption"])):
            v = F.normalize(net.encode_video(torch.from_numpy(tiny.a["test_frames"][i:i + 1]))[0], dim=-1)[0] \
                if not frames.is_floating_point() else None
            for k in range(len(D.POS)):
                negs = [int(t) for t in tiny.a["test_posrank"][i, k] if t >= 0]
                if not negs:
                    assert got[i, k] == 0
                    continue
                ids = [int(tiny.a["test_caption"][i])] + negs
                t = F.normalize(net.encode_tokens(tokens[ids], tokens[ids] == 0), dim=-1)
                s = (t @ v).tolist()
                assert got[i, k] == 1 + sum(x >= s[0] for x in s[1:])


def test_the_test_negatives_change_one_part_of_speech_and_are_false(tiny):
    from hardneg.world import sample_scene
    from hardneg.world.grammar import SLOTS, parse, pos_of
    from hardneg.world.truth import check

    inv = _texts(tiny)
    n_checked = 0
    for i in range(len(tiny.a["test_caption"])):
        scene = sample_scene(0, "test", i)
        p = parse(inv[int(tiny.a["test_caption"][i])])
        for k, pos in enumerate(D.POS):
            for t in tiny.a["test_posrank"][i, k]:
                if t < 0:
                    continue
                c = parse(inv[int(t)])
                assert {pos_of(s) for s in SLOTS if p.get(s) != c.get(s)} == {pos}
                assert check(scene, inv[int(t)]) == "false"
                n_checked += 1
    assert n_checked > 5 * len(tiny.a["test_caption"])


def test_the_shuffled_row_pairs_videos_with_other_captions_and_leaves_other_rows_alone(tiny):
    cfg = {**TINY, "device": "cpu"}
    caps = tiny.a["train_caption"]
    for seed in (0, 1):
        b = D.batch_for(tiny, "shuffled", seed, 2, cfg)
        c = D.batch_for(tiny, "coarse", seed, 2, cfg)
        assert (b["idx"] == c["idx"]).all() and (c["pos"] == caps[c["idx"]]).all()
        assert (b["pos"] == D.shuffled_captions(caps)[b["idx"]]).all()
    perm = D.shuffled_captions(np.arange(200))
    assert sorted(perm) == list(range(200)) and (perm != np.arange(200)).mean() > 0.95


def test_posrank_chance_is_the_mean_reciprocal_rank_of_a_random_order():
    body = {"data": {"test_item_cat": [0, 1], "test_item_candidates": [2, 4],
                     "test_posrank_candidates": [[1, 3, 0, 1, 1], [1, 3, 2, 1, 1]]}}
    ch = P.chance(body)
    assert ch["posrank-noun"] == pytest.approx((1 + 1 / 2) / 2)
    assert ch["posrank-adj"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    assert ch["posrank-verb"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)  # the scene without a verb negative drops out
    assert ch["fine"] == pytest.approx((1 / 2 + 1 / 4) / 2)


# ------------------------------------------------------------------------------ the report's verdicts


def _body(effect: bool, leak: bool, seeds: int = 4, scenes: int = 300) -> dict:
    """A results file with planted ranks: word-level puts the caption first at every part of speech when
    `effect`, else like coarse; the shuffled row ranks at random, or like word-level when `leak`."""
    rng = np.random.default_rng(7)
    K = 16

    def job(row, seed):
        good = (row == "world-word" and effect) or (row == "shuffled" and leak)
        ranks = {p: "".join(P.RANK36[1 if good and rng.random() < 0.9 else int(rng.integers(1, K + 2))]
                            for _ in range(scenes)) for p in D.POS}
        chance = row == "shuffled" and not leak  # a random order of the scenes' captions: rank uniform in 0..N-1
        rr = "".join((lambda r: str(r) if r < 10 else "x")(int(rng.integers(0, scenes if chance else 12)))
                     for _ in range(scenes))
        right = 0.25 if chance else 0.6  # 4 candidates per item
        return {"row": row, "seed": seed, "steps": 100, "curve": [],
                "scores": {"100": {"posrank": ranks, "v2t": rr, "t2v": rr,
                                   "test_correct": "".join(str(int(rng.random() < right)) for _ in range(scenes))}}}

    rows = ["coarse", "world-word", "shuffled"]
    return {"profile": {"rows": rows, "primary": [["world-word", "coarse", "posrank"], ["world-word", "coarse", "retrieval"]]},
            "plan": {"steps": 100, "target": 0.02},
            "data": {"test_item_cat": [i % 9 for i in range(scenes)], "test_item_candidates": [4] * scenes,
                     "test_posrank_candidates": [[K] * 5] * scenes},
            "jobs": {f"{r}/{s}": job(r, s) for r in rows for s in range(seeds)}}


def _controls(body):
    step = body["plan"]["steps"]
    prim = [P.contrast(body, a, b, m, 2, step) for a, b, m in body["profile"]["primary"]]
    for c in prim:
        c["p_holm"] = min(1.0, 2 * c["p"])
    return P.controls_text(body, step, prim)


def test_the_report_says_whether_the_positive_control_showed_the_effect():
    assert "**It shows the effect**" in _controls(_body(effect=True, leak=False))
    assert "**It does NOT show the effect**" in _controls(_body(effect=False, leak=False))


def test_the_report_calls_out_a_negative_control_above_chance():
    assert "**At chance**" in _controls(_body(effect=True, leak=False))
    assert "**ABOVE chance**" in _controls(_body(effect=True, leak=True))
