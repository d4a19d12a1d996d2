"""What the training experiment trains (`experiments/training/training_design.py`): the rows' objectives,
batches and negatives (issues 34 and 43).

What is checked: each objective term equals its loss function (and Eq. 2 with the oracle teacher a
slow reference written from the equation); the negatives have no text-only shortcut; Eq. 1's teacher
labels are not all one value; N per part of speech; the seed-level paired test equals scipy and an
exact enumeration; the primary family holds the papers' contrasts and claim (2) on retrieval.
The runner, the statistics of the report and the stored results: tests/training/test_experiment.py.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

EXP = Path(__file__).resolve().parents[2] / "experiments" / "training"
sys.path.insert(0, str(EXP))

import training_design as D  # noqa: E402
import training_stats as S  # noqa: E402

#: the tests' configuration: a few scenes, small model (the objectives, not the result)
TINY = {"train": 16, "val": 9, "test": 18, "batch": 4, "n_per_pos": 1, "dim": 16, "image_size": 8, "lr": 1e-3}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny configuration's data (generator rows included when the negatives file is in
    experiments/training/data)."""
    neg = sorted(EXP.glob("data/world-negatives-s0-train*.json.gz"))
    return D.prepare(TINY, 0, 1, neg[-1] if neg else None)


def _texts(data) -> dict[int, str]:
    """The text table read back from its tokens (the special tokens <pad>, <cls>, <unk> left out)."""
    voc = data.meta["vocabulary"]
    return {i: " ".join(voc[t] for t in row if not voc[t].startswith("<")).replace(" ,", ",")
            for i, row in enumerate(data.a["tokens"])}


def _cfg():
    return {**TINY, "device": "cpu"}


# ------------------------------------------------------------------------------ objectives


def test_every_term_equals_its_loss_function():
    from hardneg.training import losses as L

    g = torch.Generator().manual_seed(0)
    B, K, Dm = 5, 6, 8
    v, p, pv = (torch.randn(B, Dm, generator=g, dtype=torch.float64) for _ in range(3))
    n = torch.randn(B, K, Dm, generator=g, dtype=torch.float64)
    mask = torch.rand(B, K, generator=g) > 0.3
    mask[:, 0] = True
    labels = (torch.rand(B, K, generator=g) > 0.7).long()
    labels[0] = 0
    teacher = torch.from_numpy(D.teacher_targets(np.random.default_rng(0).random((B, K)), mask.numpy())).double()
    tau = 0.07
    coarse, eq3, withpos, eq1, eq2 = D.member_losses(v, pv, p, n, mask, labels, teacher, tau)
    assert torch.allclose(coarse, L.coarse_loss(v, p, tau))
    assert torch.allclose(eq3, L.fine_loss(pv, p, n, tau, mask, denominator="printed"))
    assert torch.allclose(withpos, L.fine_loss(pv, p, n, tau, mask))
    assert torch.allclose(eq1, L.llm_teacher_label_loss(v, p, n, tau, labels=torch.where(mask, labels, 1)))
    assert torch.allclose(eq2, L.llm_teacher_logit_loss(v, p, n, teacher, tau, mask))


@pytest.mark.slow
def test_eq2_with_the_oracle_teacher_matches_a_slow_reference(tiny):
    """Feint6K Eq. 2 written with loops: z_LLM,t = exp(sim(p,t)/tau) / sum_t' exp(sim(p,t')/tau), sim = the
    share of the 13 slots a candidate keeps (parsed again here), KL(z_LLM || z_video-text)."""
    from hardneg.world.grammar import SLOTS, parse

    texts = _texts(tiny)
    b = D.batch_for(tiny, "eq2", 0, 0, _cfg())
    g = torch.Generator().manual_seed(1)
    B, K = b["neg"].shape
    v = torch.randn(B, 8, generator=g, dtype=torch.float64)
    emb = torch.randn(len(texts), 8, generator=g, dtype=torch.float64)
    mask = torch.from_numpy(b["mask"])
    got = D.member_losses(v, v, emb[b["pos"]], emb[b["neg"]], mask, torch.zeros(B, K, dtype=torch.long),
                          torch.from_numpy(b["teacher"]).double(), 0.07)[4]
    tau, total = 0.07, 0.0
    for i in range(B):
        pos = texts[int(b["pos"][i])]
        cands = [int(b["pos"][i])] + [int(b["neg"][i, k]) for k in range(K) if b["mask"][i, k]]
        facts = [parse(texts[c]) for c in cands]
        sim_t = [sum(facts[0].get(s) == f.get(s) for s in SLOTS) / len(SLOTS) for f in facts]
        assert parse(pos) == facts[0]
        zt = [math.exp(s / tau) for s in sim_t]
        zt = [z / sum(zt) for z in zt]
        cos = [float(torch.nn.functional.cosine_similarity(v[i], emb[c], dim=0)) for c in cands]
        zs = [math.exp(c / tau) for c in cos]
        zs = [z / sum(zs) for z in zs]
        total += sum(a * (math.log(a) - math.log(s)) for a, s in zip(zt, zs) if a > 0)
    assert abs(float(got) - total / B) < 1e-6  # the teacher targets are stored as float32
    assert len({round(x, 6) for x in b["teacher"][:, 1:][b["mask"]].tolist()}) > 1  # not one value


def test_no_negative_of_any_row_has_a_word_the_text_tower_reads_as_unk(tiny):
    from hardneg.models.trainable import TinyTemporal

    unk = TinyTemporal(tiny.meta["vocabulary"], dim=8, image_size=8).index["<unk>"]
    seen = 0
    for key in D.runnable_rows(tiny, list(D.ROWS)):
        if key == "coarse":
            continue
        for step in range(4):
            b = D.batch_for(tiny, key, 0, step, _cfg())
            rows = tiny.a["tokens"][b["neg"][b["mask"]]]
            assert not (rows == unk).any(), f"row {key}: a negative holds a word the text tower maps to <unk>"
            seen += len(rows)
    assert seen > 0
    assert all(v == 0 for v in tiny.meta["pools_with_unknown_words"].values())


def test_eq1_teacher_labels_are_not_all_one_value_and_are_the_truth(tiny):
    from hardneg.world import sample_scene
    from hardneg.world.truth import check
    from training_world import action_rewrites

    lab = tiny.a["pool_rewrites_truth"][tiny.a["pool_rewrites"] >= 0]
    assert 0 < lab.sum() < lab.size
    scene = sample_scene(0, "train", 3)
    rw = action_rewrites(scene, 40)
    verdicts = {check(scene, t) for t in rw}
    assert verdicts == {"true", "false"}


def test_world_word_level_draws_n_per_part_of_speech(tiny):
    cfg = {**_cfg(), "n_per_pos": 2}
    b = D.batch_for(tiny, "world-word", 1, 0, cfg)
    assert b["neg"].shape[1] == 5 * 2
    from hardneg.world.grammar import SLOTS, parse, pos_of

    inv = _texts(tiny)
    for i in range(len(b["idx"])):
        p = parse(inv[int(b["pos"][i])])
        for k in range(10):
            if b["mask"][i, k]:
                c = parse(inv[int(b["neg"][i, k])])
                changed = {pos_of(s) for s in SLOTS if p.get(s) != c.get(s)}
                assert changed == {D.POS[k // 2]}


# ------------------------------------------------------------------------------ statistics


def test_paired_seed_test_equals_scipy_and_an_exact_enumeration():
    from scipy import stats

    rng = np.random.default_rng(3)
    a, b = rng.normal(0.5, 0.05, 6), rng.normal(0.47, 0.05, 6)
    got = S.paired_seed_test(a, b)
    ref = stats.ttest_rel(a, b)
    assert math.isclose(got["p_t"], ref.pvalue, rel_tol=1e-10)
    assert math.isclose(got["t"], ref.statistic, rel_tol=1e-10)
    ci = ref.confidence_interval(0.95)
    assert math.isclose(got["low"], ci.low, rel_tol=1e-9) and math.isclose(got["high"], ci.high, rel_tol=1e-9)
    d = a - b
    flips = [abs(np.mean(np.array(s) * d)) for s in itertools.product([1, -1], repeat=6)]
    assert math.isclose(got["p_signflip"], sum(f >= abs(d.mean()) - 1e-12 for f in flips) / 64)
    same = S.paired_seed_test(a + 1, a)  # all 6 seeds the same sign: the smallest exact p, 2/64
    assert math.isclose(same["p_signflip"], 2 / 64)


def test_the_primary_family_is_the_papers_contrasts_and_claim_2_on_retrieval():
    from training_runner import PRIMARY

    got = {(a, b, m) for a, b, m, _ in PRIMARY}
    assert got == {("world-word", "coarse", "fine"), ("world-word", "coarse", "retrieval"),
                   ("gen-phrase", "gen-word", "retrieval"), ("prompt", "gen-phrase", "fine"),
                   ("eq1", "coarse", "action"), ("eq2", "coarse", "action")}
