"""Issue 50: PoSRank's own evaluation on the world, the negative control's shuffled captions, chance, and the
report's verdicts on the controls (they must be able to say "the effect did NOT show").

* `posrank_ranks` equals a slow reference written from PoSRank Sec. 4 (rank of the true caption among itself
  and the scene's word-level negatives of one part of speech, 1-based, ties against the caption);
* the test scenes' T_i^p are the world's word-level negatives of that part of speech only, each false;
* the `shuffled` row pairs every video with another scene's caption, the same for every seed, and leaves the
  other rows' batches alone;
* chance of PoSRank^p is H(K+1) / (K+1) for exchangeable scores, and lower for a video-blind text scorer
  (`training_chance`): one-word edits in several slots put the caption in the middle; the negative control
  is judged against that band;
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
    assert "**It does NOT show the effect in this setting**" in _controls(_body(effect=False, leak=False))


def test_the_report_calls_out_a_negative_control_above_chance():
    assert "**At chance**" in _controls(_body(effect=True, leak=False))
    assert "**ABOVE chance**" in _controls(_body(effect=True, leak=True))


# ------------------------------------------------------------------ chance of a video-blind text scorer


def _two_slot_world(scenes: int, values: int = 9):
    """Captions "<cls> w1 w2" with two slots of `values` words each, and PoSRank-like negatives: every other
    word of slot 1, then every other word of slot 2 (one-word edits of the caption, K = 2 (values - 1))."""
    table, index = [], {}

    def row(a, b):
        return index.setdefault((a, b), len(index))

    rng = np.random.default_rng(3)
    caps, cand = [], []
    for _ in range(scenes):
        a, b = (int(x) for x in rng.integers(0, values, 2))
        caps.append(row(a, b))
        cand.append([[row(x, b) for x in range(values) if x != a] + [row(a, y) for y in range(values) if y != b]])
    table = np.zeros((len(index), 3), np.int64)
    for (a, b), r in index.items():
        table[r] = [1, 2 + a, 2 + values + b]
    return table, np.asarray(caps), np.asarray(cand)


def test_a_blind_scorer_of_one_word_edits_ranks_the_caption_in_the_middle():
    from training_chance import posrank_blind_chance

    values = 9
    tokens, caps, cand = _two_slot_world(400, values)
    got = posrank_blind_chance(tokens, caps, cand, draws=64)[0]
    # an additive scorer: rank = 1 + (rank within slot 1's edits) + (rank within slot 2's), each uniform in 0..8
    want = np.mean([1 / (1 + a + b) for a in range(values) for b in range(values)])
    K = cand.shape[2]
    exchangeable = float(np.sum(1 / np.arange(1, K + 2)) / (K + 1))
    assert got == pytest.approx(want, abs=0.01)
    assert got < exchangeable - 0.04  # 0.153 vs 0.202: H(K+1)/(K+1) is not a blind model's chance here


def test_a_blind_scorer_of_unrelated_texts_gets_the_exchangeable_chance():
    from training_chance import posrank_blind_chance

    n, K = 300, 16
    tokens = np.concatenate([np.ones((n * (K + 1), 1), np.int64),
                             2 + np.arange(n * (K + 1) * 3).reshape(-1, 3)], 1)  # no word shared by two texts
    caps = np.arange(n) * (K + 1)
    cand = (caps[:, None] + 1 + np.arange(K)[None])[:, None, :]
    got = posrank_blind_chance(tokens, caps, cand, draws=32)[0]
    assert got == pytest.approx(float(np.sum(1 / np.arange(1, K + 2)) / (K + 1)), abs=0.01)


def test_the_world_test_negatives_put_a_blind_scorer_below_the_exchangeable_chance(tiny):
    from training_chance import posrank_blind_chance

    got = posrank_blind_chance(tiny.a["tokens"], tiny.a["test_caption"], tiny.a["test_posrank"])
    K = (tiny.a["test_posrank"] >= 0).sum(2)
    formula = np.mean([(np.sum(1 / np.arange(1, k + 2)) / (k + 1)) for k in K[:, 1]])
    assert got[1] < formula  # adjectives: four slots (two sizes, two colours)


def _blind_shuffled_body(with_blind: bool) -> dict:
    """The planted results, with the shuffled row ranked like a video-blind additive text scorer: the caption's
    rank among 16 one-word edits in two slots is 1 + a + b, a and b uniform in 0..8."""
    body = _body(effect=True, leak=False)
    rng = np.random.default_rng(11)
    scenes = len(body["data"]["test_item_cat"])
    for key, job in body["jobs"].items():
        if key.startswith("shuffled/"):
            job["scores"]["100"]["posrank"] = {p: "".join(P.RANK36[1 + int(rng.integers(0, 9)) + int(rng.integers(0, 9))]
                                                          for _ in range(scenes)) for p in D.POS}
    if with_blind:
        level = float(np.mean([1 / (1 + a + b) for a in range(9) for b in range(9)]))
        body["data"]["test_posrank_blind"] = [level] * len(D.POS)
    return body


def test_the_negative_control_is_judged_against_a_blind_scorers_chance():
    assert "**BELOW chance** on posrank" in _controls(_blind_shuffled_body(with_blind=False))
    text = _controls(_blind_shuffled_body(with_blind=True))
    assert "**At chance**" in text and "video-blind text scorer" in text
    table = P.table4(_blind_shuffled_body(with_blind=True), 100)
    assert "chance of a video-blind text scorer" in table


def _control_results(effect: float, seeds: int = 6, scenes: int = 200) -> dict:
    """A positive-control results file (`diagnostics/positive_control.py`'s layout) whose 'printed' arm raises the
    adjective reciprocal ranks by `effect` on every scene and seed, noise included; 'bounded' raises them by none."""
    rng = np.random.default_rng(0)
    arms = [["coarse", "coarse only"], ["printed", "printed"], ["bounded", "bounded"], ["all-pos", "all"]]
    jobs = []
    for seed in range(seeds):
        base = rng.uniform(0.1, 0.5, (scenes, 5))
        for name, _ in arms:
            rr = np.clip(base + rng.normal(0, 0.05, base.shape) + (effect if name == "printed" else 0.0), 0, 1)
            jobs.append({"seed": seed, "arm": name, "evals": [{"step": 10, "test_posrank": rr.mean(0).tolist()}],
                         "test_rr": rr.tolist()})
    return {"settings": {"steps": 10, "pretrain": 5, "N": 1, "lam": 1.0, "pos_index": 1, "arms": arms,
                         "primary": ["printed", "bounded"]}, "jobs": jobs}


def test_positive_control_block_says_which_arm_shows_the_effect():
    text = P.positive_control_block(_control_results(0.15))
    assert "*printed*: **shows the effect**" in text
    assert "*bounded*: **does NOT show the effect**" in text
    small = P.positive_control_block(_control_results(0.03))  # significant at this noise, under the 10-point rule
    assert "*printed*: significant but under 10 points" in small
    one = _control_results(0.15, seeds=1)
    assert "not enough to test" in P.positive_control_block(one)
