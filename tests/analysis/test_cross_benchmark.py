"""`hardneg analyze cross-benchmark`: per-item R@1 from the engine, joined on videos across benchmarks.

Predictions are hand-set per item (right, wrong or tied) on the built-in samples, so every
expected number below follows from the design tables, not from the code under test.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from hardneg.analysis.cross_benchmark import cross_benchmark_view, load_part
from hardneg.cli import main
from hardneg.datasets.samples import build_samples
from hardneg.io import atomic_write_parquet
from hardneg.items import load_items
from hardneg.schema import PREDICTIONS_SCHEMA, predictions_metadata

R, W, T = 1.0, 0.0, 0.5  # right, wrong, tied (2 candidates: R@1 = 1/2 under expected ties)

#: per-item outcome by item id (built-in samples); the video of each id is in its comment
FEINT6K = {"msrvtt:video7010": R, "msrvtt:video7011": R, "msrvtt:video7012": W, "msrvtt:video7013": W,
           "msrvtt:video7014": W}
VITATECS = {
    "direction:1": R, "type:1": R,  # video7010
    "direction:2": R,  # video7011
    "intensity:1": W,  # video7012
    "localization:1": T,  # video7013
    "sequence:1": R,  # video7014
    "direction:3": W, "compositionality:2": R,  # Ab3dEf9hIjk_000012_000022
    "direction:4": R,  # video9004
    "intensity:2": R, "type:4": R,  # Zx8yWv7uTsr_000030_000040
    "intensity:3": R, "type:3": W,  # video9002
    "sequence:2": W,  # Lk9jHg8fDs7_000100_000110
    "localization:2": R,  # Qw1eRt2yUi3_000005_000015
    "localization:3": R, "compositionality:3": T,  # video9003
    "compositionality:1": W,  # video9005
    "type:2": R,  # video9001
}
CONTRAST = {"verb_human:video9001": W, "verb_human:video9002": R, "verb_human:video9003": R, "verb_human:video9004": R}
FIRE = {"ret0": R, "ret1": W, "ret2": R, "ret3": R}  # the query's own video first, or not


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    out = tmp_path_factory.mktemp("built")
    build_samples(out, benchmarks=("feint6k", "contrast_sets", "vitatecs", "fire"))
    return out


def _mc_scores(items, outcome):
    rows = []
    for i, item_id in enumerate(items.ids.tolist()):
        n, label = int(items.n_candidates[i]), int(items.label[i])
        o = outcome[item_id]
        s = np.full(n, 0.5) if o == T else np.zeros(n)
        if o == R:
            s[label] = 1.0
        elif o == W:
            s[(label + 1) % n] = 1.0
        rows.append(s.tolist())
    return rows


def _fire_scores(items, outcome):
    rows = []
    for i, item_id in enumerate(items.ids.tolist()):
        s = np.zeros(len(items.video_ids))
        own = int(items.original[i])
        s[own if outcome[item_id] == R else (own + 1) % len(s)] = 1.0
        rows.append(s.tolist())
    return rows


def write(path, root, benchmark, config, outcome, model="hand-model"):
    items = load_items(str(root / benchmark), config)
    assert set(items.ids.tolist()) == set(outcome), "the design table must cover every item"
    retrieval = items.task == "retrieval"
    extra = {"video_ids": list(items.video_ids)} if retrieval else {}
    meta = predictions_metadata(task=items.task, benchmark=benchmark, config=config, split="test",
                                data_revision=items.revision, model_id=model, model_revision="0",
                                frames={"n_frames": 0}, hardneg_version="0",
                                dataset_path=str(root / benchmark), **extra)
    scores = _fire_scores(items, outcome) if retrieval else _mc_scores(items, outcome)
    table = pa.Table.from_pydict({"id": items.ids.tolist(), "scores": scores},
                                 schema=PREDICTIONS_SCHEMA.with_metadata(meta))
    return str(atomic_write_parquet(table, path))


@pytest.fixture(scope="module")
def preds(root, tmp_path_factory):
    d = tmp_path_factory.mktemp("preds")
    return {
        "feint6k": write(d / "f.parquet", root, "feint6k", "msrvtt", FEINT6K),
        "vitatecs": write(d / "v.parquet", root, "vitatecs", "all", VITATECS),
        "contrast": write(d / "c.parquet", root, "contrast_sets", "verb_human", CONTRAST),
        "fire": write(d / "r.parquet", root, "fire", "msrvtt", FIRE),
    }


def _video_of(root, benchmark, config):
    items = load_items(str(root / benchmark), config)
    return dict(zip(items.ids.tolist(), items.clusters.tolist()))


def _expected_agreement(root, a, b, rule):
    """Both right / only a / only b / both wrong from the design tables alone."""
    def per_video(spec):
        bench, config, outcome = spec
        video = _video_of(root, bench, config)
        out = {}
        for item_id, o in outcome.items():
            out.setdefault(video[item_id], []).append(o)
        return {v: (min(x) == 1.0 if rule == "all" else np.mean(x) > 0.5) for v, x in out.items()}

    pa_, pb = per_video(a), per_video(b)
    shared = set(pa_) & set(pb)
    return (len(shared), sum(pa_[v] and pb[v] for v in shared), sum(pa_[v] and not pb[v] for v in shared),
            sum(pb[v] and not pa_[v] for v in shared), sum(not pa_[v] and not pb[v] for v in shared))


def test_per_item_correctness_comes_from_the_engine_and_joins_on_videos(root, preds):
    part = load_part(preds["vitatecs"])
    video = _video_of(root, "vitatecs", "all")
    ids = load_items(str(root / "vitatecs"), "all").ids.tolist()
    assert part.name == "vitatecs/all" and part.model_id == "hand-model"
    assert part.correct.tolist() == [VITATECS[i] for i in ids]
    assert part.video_ids.tolist() == [video[i] for i in ids]
    fire = load_part(preds["fire"])
    assert fire.correct.tolist() == [FIRE[q] for q in ["ret0", "ret1", "ret2", "ret3"]]
    assert fire.video_ids.tolist() == ["video7010", "video7011", "video7012", "video7013"]
    # the authors' VITATECS rule: a tie counts against the caption
    assert load_part(preds["vitatecs"], ties="pessimistic").correct.tolist() == [
        0.0 if VITATECS[i] == T else VITATECS[i] for i in ids]


@pytest.mark.parametrize("rule", ["all", "majority"])
def test_agreement_counts_match_the_design(root, preds, rule):
    specs = {"feint6k": ("feint6k", "msrvtt", FEINT6K), "vitatecs": ("vitatecs", "all", VITATECS),
             "contrast": ("contrast_sets", "verb_human", CONTRAST), "fire": ("fire", "msrvtt", FIRE)}
    order = ["feint6k", "vitatecs", "contrast", "fire"]
    res = cross_benchmark_view([load_part(preds[k]) for k in order], rule=rule, n_resamples=0)
    assert len(res.pairs) == 6
    by_pair = {(p["a"], p["b"]): p for p in res.pairs}
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            pa_, pb = load_part(preds[a]).name, load_part(preds[b]).name
            p = by_pair[(pa_, pb)]
            got = (p["shared_videos"], p["both_right"], p["only_a"], p["only_b"], p["both_wrong"])
            assert got == _expected_agreement(root, specs[a], specs[b], rule), (a, b)
    # video9003 (right + tie) is right only under the majority rule, so the two rules differ here
    vc = by_pair[("vitatecs/all", "contrast_sets/verb_human")]
    assert vc["videos"]["video9003"] == [rule == "majority", True]
    # feint6k msrvtt (video70xx) and the contrast sample (video90xx) share no video: nothing is shared by all
    assert res.shared_videos == [] and any("no video is shared by every input" in n for n in res.notes)
    assert all(r["shared_items"] == 0 and r["R@1_shared"] is None for r in res.rows)


def test_accuracy_on_the_videos_every_input_shares(root, preds):
    res = cross_benchmark_view([load_part(preds["feint6k"]), load_part(preds["vitatecs"]), load_part(preds["fire"])],
                               n_resamples=200)
    assert res.shared_videos == ["video7010", "video7011", "video7012", "video7013"]
    video = _video_of(root, "vitatecs", "all")
    shared = set(res.shared_videos)
    rows = {r["input"]: r for r in res.rows}
    vit = [o for i, o in VITATECS.items() if video[i] in shared]
    assert rows["vitatecs/all"]["shared_items"] == len(vit) == 5
    assert rows["vitatecs/all"]["R@1_shared"] == pytest.approx(np.mean(vit))
    assert rows["vitatecs/all"]["R@1_all"] == pytest.approx(np.mean(list(VITATECS.values())))
    assert rows["feint6k/msrvtt"]["R@1_shared"] == pytest.approx(np.mean([R, R, W, W]))
    assert rows["fire/msrvtt"]["R@1_shared"] == pytest.approx(np.mean(list(FIRE.values())))
    for r in res.rows:  # the engine's video-bootstrap interval contains the value
        assert r["low_shared"] <= r["R@1_shared"] <= r["high_shared"]


def test_cli_writes_json_png_and_table(root, preds, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["analyze", "cross-benchmark", "--predictions", f"F={preds['feint6k']}", preds["vitatecs"],
            "--data", str(root), "--resamples", "50", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "agreement per video (rule: all)" in printed and "vitatecs/all" in printed
    data = json.loads((out / "cross-benchmark.json").read_text())
    assert data["rows"][0]["input"] == "F" and data["details"]["shared_videos"] == [
        "video7010", "video7011", "video7012", "video7013", "video7014"]
    pair = data["details"]["agreement"][0]
    assert (pair["both_right"], pair["only_a"], pair["only_b"], pair["both_wrong"]) == (2, 0, 1, 2)
    assert (out / "cross-benchmark.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(args) == 2 and "--overwrite" in capsys.readouterr().err


def test_bad_inputs_are_clear_errors(root, preds, tmp_path, capsys):
    with pytest.raises(ValueError, match="at least 2"):
        cross_benchmark_view([load_part(preds["feint6k"])])
    with pytest.raises(ValueError, match="share the name"):
        cross_benchmark_view([load_part(preds["feint6k"]), load_part(preds["feint6k"])])
    assert main(["analyze", "cross-benchmark", "--predictions", preds["feint6k"], preds["vitatecs"],
                 "--data", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "has no folder feint6k/" in capsys.readouterr().err


def test_different_models_are_noted(root, preds, tmp_path):
    other = write(tmp_path / "o.parquet", root, "contrast_sets", "verb_human", CONTRAST, model="other-model")
    res = cross_benchmark_view([load_part(preds["vitatecs"]), load_part(other)], n_resamples=0)
    assert any("different models (hand-model, other-model)" in n for n in res.notes)
