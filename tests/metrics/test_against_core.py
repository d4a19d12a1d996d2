"""Each module equals the ranking core it wraps, under every tie rule, one-shot and streamed."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from metric_test_data import RETRIEVAL_MODULES, kwargs_for

from hardneg.metric_modules import METRIC_NAMES
from hardneg.ranking import TIE_RULES, Qrels, bootstrap_ci, multiple_choice, retrieval

RULES = sorted(TIE_RULES)


def core_scores(name: str, inputs: dict, ties: str, seed: int = 0) -> dict[str, float]:
    """What the module must report, straight from hardneg.ranking."""
    if name in RETRIEVAL_MODULES:
        ks = (1, 5, 10)
        r = retrieval(inputs["predictions"], Qrels.from_lists(inputs["references"]), original=inputs["original"],
                      ks=ks, ties=ties, seed=seed)
        if name == "correct_at_k":
            out = {f"C@{k}": r.aggregate[f"C@{k}"] for k in ks}
            out.update({f"C@{k}_original": r.aggregate[f"R@{k}"] for k in ks})
            return out
        return {"mAP": r.aggregate["mAP"], "mAP_original": r.aggregate["mAP_original"]}
    if name == "posrank":
        r = multiple_choice(inputs["predictions"], inputs["references"], ties=ties, seed=seed,
                            groups={"pos": inputs["pos"]})
        per = {f"PoSRank_{p}": v["MRR"] for p, v in r.by_group["pos"].items()}
        per["PoSRank"] = float(np.mean(list(per.values())))
        return per
    if name == "accuracy":  # per group, and their unweighted mean (VITATECS)
        r = multiple_choice(inputs["predictions"], inputs["references"], ties=ties, seed=seed,
                            groups={"g": inputs["groups"]})
        per = {f"Accuracy_{g}": v["R@1"] for g, v in r.by_group["g"].items()}
        per["Accuracy"] = float(np.mean(list(per.values())))
        return per
    r = multiple_choice(inputs["predictions"], inputs["references"], ks=(1, 2), ties=ties, seed=seed)
    if name == "rcad_accuracy":
        return {"R@1": r.aggregate["R@1"], "R@2": r.aggregate["R@2"]}
    return {"MeanR": r.aggregate["MeanR"], "MedianR": r.aggregate["MedianR"]}


@pytest.mark.parametrize("ties", RULES)
@pytest.mark.parametrize("name", METRIC_NAMES)
def test_compute_equals_core(load, name, ties):
    rng = np.random.default_rng(zlib.crc32(f"{name}/{ties}".encode()))
    inputs = kwargs_for(name, rng, n=40, levels=3)
    out = load(name).compute(**inputs, ties=ties, seed=5, n_resamples=0)
    expected = core_scores(name, inputs, ties, seed=5)
    # exact, except a mean over parts of speech that may be summed in another order
    assert {k: out[k] for k in expected} == pytest.approx(expected, abs=1e-15, rel=1e-15)
    assert out["ties"] == ties
    assert out["n"] == len(inputs["references"])
    assert not any(k.endswith("_ci") for k in out)  # n_resamples=0: no intervals


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_streaming_equals_one_shot(load, name):
    rng = np.random.default_rng(7)
    inputs = kwargs_for(name, rng, n=50)
    one_shot = load(name).compute(**inputs, n_resamples=200, seed=1)
    module = load(name)
    for lo, hi in [(0, 7), (7, 8), (8, 31), (31, 50)]:  # uneven batches, one of a single example
        module.add_batch(**{k: v[lo:hi] for k, v in inputs.items()})
    streamed = module.compute(n_resamples=200, seed=1)
    assert streamed == one_shot
    # the module is reusable: a second round gives the same again
    again = module.compute(**inputs, n_resamples=200, seed=1)
    assert again == one_shot


@pytest.mark.parametrize("name", ["rcad_accuracy", "posrank"])
def test_add_single_examples(load, name):
    rng = np.random.default_rng(11)
    inputs = kwargs_for(name, rng, n=6)
    module = load(name)
    for i in range(6):
        module.add(prediction=inputs["predictions"][i], reference=inputs["references"][i],
                   **{k: v[i] for k, v in inputs.items() if k not in ("predictions", "references")})
    assert module.compute(n_resamples=0) == load(name).compute(**inputs, n_resamples=0)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_in_memory_and_on_disk_agree(load, name):
    inputs = kwargs_for(name, np.random.default_rng(3), n=20)
    assert load(name, keep_in_memory=True).compute(**inputs, n_resamples=50) == load(name).compute(
        **inputs, n_resamples=50
    )


def test_intervals_are_the_core_bootstrap(load):
    """A mean score's interval is hardneg.ranking.bootstrap_ci over the same videos and seed."""
    rng = np.random.default_rng(0)
    inputs = kwargs_for("rcad_accuracy", rng, n=90)
    out = load("rcad_accuracy").compute(**inputs, n_resamples=300, seed=4, return_per_example=True)
    for key in ("R@1", "R@2"):
        ci = bootstrap_ci(out["per_example"][key], inputs["video_ids"], n_resamples=300, seed=4)
        assert out[f"{key}_ci"] == pytest.approx([ci.low, ci.high], abs=1e-12)
        assert out[f"{key}_ci"][0] <= out[key] <= out[f"{key}_ci"][1]


def test_intervals_cluster_by_video(load):
    """Duplicating every example under the same video id must not narrow the interval (whole videos move)."""
    rng = np.random.default_rng(1)
    scores = rng.random((40, 6))
    positive = rng.integers(0, 6, 40)
    videos = np.array([f"v{i}" for i in range(40)])
    m = load("rcad_accuracy")
    single = m.compute(predictions=scores, references=positive, video_ids=videos, n_resamples=400)
    doubled = m.compute(predictions=np.vstack([scores, scores]), references=np.r_[positive, positive],
                        video_ids=np.r_[videos, videos], n_resamples=400)
    unclustered = m.compute(predictions=np.vstack([scores, scores]), references=np.r_[positive, positive],
                            n_resamples=400)
    assert doubled["R@1"] == single["R@1"]
    assert doubled["R@1_ci"] == pytest.approx(single["R@1_ci"])
    width = lambda r: r["R@1_ci"][1] - r["R@1_ci"][0]  # noqa: E731
    assert width(unclustered) < width(doubled)


def test_intervals_are_seeded(load):
    inputs = kwargs_for("mean_rank", np.random.default_rng(2), n=60)
    m = load("mean_rank")
    a = m.compute(**inputs, n_resamples=200, seed=0)
    b = m.compute(**inputs, n_resamples=200, seed=0)
    c = m.compute(**inputs, n_resamples=200, seed=1)
    assert a == b
    assert a["MeanR_ci"] != c["MeanR_ci"]


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_per_example_on_request(load, name):
    inputs = kwargs_for(name, np.random.default_rng(4), n=25)
    m = load(name)
    assert "per_example" not in m.compute(**inputs, n_resamples=0)
    out = m.compute(**inputs, n_resamples=0, return_per_example=True)
    assert out["per_example"]
    for values in out["per_example"].values():
        assert len(values) == 25


def test_per_example_values_match_core(load):
    inputs = kwargs_for("mean_average_precision", np.random.default_rng(5), n=30)
    out = load("mean_average_precision").compute(**inputs, n_resamples=0, return_per_example=True)
    core = retrieval(inputs["predictions"], Qrels.from_lists(inputs["references"]), original=inputs["original"])
    np.testing.assert_array_equal(out["per_example"]["AP"], core.per_example["AP"])
    np.testing.assert_array_equal(out["per_example"]["AP_original"], core.per_example["AP_original"])


def test_ragged_rows_match_core_with_mask(load):
    rng = np.random.default_rng(6)
    lengths = rng.integers(2, 7, 30)
    rows = [np.round(rng.random(n), 1).tolist() for n in lengths]
    positive = np.array([int(rng.integers(0, n)) for n in lengths])
    padded = np.zeros((30, 6))
    mask = np.zeros((30, 6), dtype=bool)
    for i, row in enumerate(rows):
        padded[i, : len(row)] = row
        mask[i, : len(row)] = True
    core = multiple_choice(padded, positive, mask=mask, ks=(1, 2))
    out = load("rcad_accuracy").compute(predictions=rows, references=positive, n_resamples=0)
    assert out["R@1"] == core.aggregate["R@1"]
    assert out["R@2"] == core.aggregate["R@2"]


def test_float32_and_tensor_inputs(load):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    scores = rng.random((20, 6)).astype(np.float32)
    positive = rng.integers(0, 6, 20)
    m = load("rcad_accuracy")
    expected = multiple_choice(scores.astype(np.float64), positive).aggregate["R@1"]
    assert m.compute(predictions=scores, references=positive, n_resamples=0)["R@1"] == expected
    out = m.compute(predictions=torch.from_numpy(scores), references=torch.from_numpy(positive), n_resamples=0)
    assert out["R@1"] == expected
    assert m.compute(predictions=scores.tolist(), references=positive.tolist(), n_resamples=0)["R@1"] == expected


def test_float32_scores_are_kept_exactly_and_mixed_streams_lose_nothing(load):
    """A float32 matrix in one call is stored as float32 (exact); a float32 batch followed by a
    float64 batch whose values float32 cannot hold is widened, so no new ties appear."""
    rcad = load("rcad_accuracy")
    rng = np.random.default_rng(5)
    s32 = rng.random((50, 6), dtype=np.float32)
    pos = rng.integers(0, 6, 50)
    core = multiple_choice(s32, pos, ks=(1, 2))
    got = rcad.compute(predictions=s32, references=pos, n_resamples=0)
    assert got["R@1"] == core["R@1"] and got["R@2"] == core["R@2"]
    # two candidates differ only beyond float32 precision: storing them as float32 would tie them
    s64 = np.array([[0.5, 0.5 + 1e-12, 0.1]] * 4)
    rcad.add_batch(predictions=s32[:, :3], references=np.zeros(50, dtype=int))
    rcad.add_batch(predictions=s64, references=np.zeros(4, dtype=int))
    streamed = rcad.compute(n_resamples=0)
    both = multiple_choice(np.vstack([s32[:, :3].astype(np.float64), s64]), np.zeros(54, dtype=int), ks=(1, 2))
    assert streamed["R@1"] == both["R@1"] and streamed["tie_rate"] == both["tie_rate"]
    assert both["tie_rate"] == multiple_choice(s32[:, :3], np.zeros(50, dtype=int))["tie_rate"] * 50 / 54
