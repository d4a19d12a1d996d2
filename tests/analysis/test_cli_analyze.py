"""`hardneg analyze` end to end: files in, JSON + PNG + table out, overwrite refused, errors named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hardneg.cli import main

from .helpers import QUERIES, SCORES, VIDEOS, write_fire, write_predictions


@pytest.fixture()
def fire_files(tmp_path):
    paths = write_fire(tmp_path / "fire", pooled_by=[["a"], ["a", "b"], ["b"], ["a"]])
    # predictions list videos in a different order than the collection: the CLI must realign them
    order = [4, 3, 2, 1, 0]
    vids = [VIDEOS[i] for i in order]
    paths["a"] = write_predictions(tmp_path / "a.parquet", QUERIES, SCORES[:, order], video_ids=vids, model_id="sys-a")
    other = SCORES[:, ::-1].copy()
    paths["b"] = write_predictions(tmp_path / "b.parquet", QUERIES, other, video_ids=VIDEOS, model_id="sys-b")
    return paths


def _fire_args(p, analysis, out, *extra):
    return ["analyze", analysis, "--queries", p["queries"], "--videos", p["videos"], "--qrels", p["qrels"],
            "--predictions", f"a={p['a']}", p["b"], "--out", str(out), *extra]


def test_label_correction_cli_writes_json_png_and_table(fire_files, tmp_path, capsys, artifacts_dir):
    out = tmp_path / "out"
    assert main(_fire_args(fire_files, "label-correction", out, "--ks", "1", "5")) == 0
    printed = capsys.readouterr().out
    assert "100.00 (33.33 + 66.67)" in printed and "sys-b" in printed  # name from metadata when not given
    data = json.loads((out / "label-correction.json").read_text())
    assert data["analysis"] == "label-correction" and data["rows"][0]["system"] == "a"
    png = (out / "label-correction.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    (artifacts_dir / "cli_label_correction.png").write_bytes(png)
    # an existing result is never overwritten silently
    assert main(_fire_args(fire_files, "label-correction", out)) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(_fire_args(fire_files, "label-correction", out, "--overwrite")) == 0


@pytest.mark.parametrize("analysis,extra", [
    ("pooling-bias", []),
    ("pooling-bias", ["--pool-from", "topk", "--pool-depth", "2"]),
    ("overlap", ["--k", "3"]),
    ("caption-length", ["--bin-width", "3"]),
    ("judgment-budget", ["--sizes", "2", "3", "--resamples", "200", "--metrics", "C@1", "AP"]),
])
def test_fire_analyses_cli(fire_files, tmp_path, analysis, extra, capsys):
    out = tmp_path / "out"
    assert main(_fire_args(fire_files, analysis, out, *extra)) == 0
    data = json.loads((out / f"{analysis}.json").read_text())
    assert data["rows"] and (out / f"{analysis}.png").stat().st_size > 10_000
    assert data["title"] in capsys.readouterr().out


def test_pooling_bias_cli_uses_the_pooled_by_column(fire_files, tmp_path):
    out = tmp_path / "out"
    assert main(_fire_args(fire_files, "pooling-bias", out, "--ks", "1")) == 0
    data = json.loads((out / "pooling-bias.json").read_text())
    assert data["params"]["pool_from"] == "qrels column"
    # system a without b's pairs: q0 loses v3 (pooled by a only) -> its top-1 v3 is unjudged
    a_new = next(r for r in data["rows"] if r["system"] == "a" and r["judgments"] == "New")
    a_all = next(r for r in data["rows"] if r["system"] == "a" and r["judgments"] == "All")
    assert a_all["C@1"] == pytest.approx(1.0) and a_new["C@1"] == pytest.approx(2 / 3)


def test_cli_names_missing_query_and_video(fire_files, tmp_path, capsys):
    bad = write_predictions(tmp_path / "bad.parquet", QUERIES[:2], SCORES[:2], video_ids=VIDEOS)
    args = _fire_args(fire_files, "overlap", tmp_path / "o")
    args[args.index("--predictions") + 2] = bad
    assert main(args) == 2
    assert "no row for query 'q2'" in capsys.readouterr().err
    bad2 = write_predictions(tmp_path / "bad2.parquet", QUERIES, SCORES[:, :4], video_ids=VIDEOS[:4])
    args[args.index("--predictions") + 2] = bad2
    assert main(args) == 2
    assert "'v4'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def built_contrast_sets(tmp_path_factory):
    pytest.importorskip("datasets")
    from hardneg.datasets import build_benchmark, sample_raw_dir

    root = tmp_path_factory.mktemp("cs")
    out = build_benchmark("contrast_sets", sample_raw_dir("contrast_sets"), root / "built").out
    items = next(Path(out).glob("verb_human/test-*.parquet"))
    return root, out, items


def test_mc_analyses_on_built_sample_and_score_predictions(built_contrast_sets, capsys, artifacts_dir):
    root, built, items = built_contrast_sets
    preds = root / "blind.parquet"
    if main(["score", "--model", "blind-unigram", "--dataset", str(built), "--config", "verb_human",
             "--out", str(preds), "--no-progress"]) != 0:
        pytest.skip("hardneg score (blind-unigram) is not usable here: " + capsys.readouterr().err[-300:])
    out = root / "out"
    assert main(["analyze", "blind-text", "--items", str(items), "--predictions", f"blind-unigram={preds}",
                 "--folds", "2", "--resamples", "200", "--out", str(out)]) == 0
    data = json.loads((out / "blind-text.json").read_text())
    assert [r["baseline"] for r in data["rows"]] == ["blind-unigram", "surface-feature classifier"]
    assert main(["analyze", "sensitivity", "--items", str(items), "--predictions", str(preds), "--out", str(out)]) == 0
    sens = json.loads((out / "sensitivity.json").read_text())
    assert sum(r["n"] for r in sens["rows"]) == 16  # 4 items x 4 negatives (1 human verb swap + 3 random)
    capsys.readouterr()
    assert main(["analyze", "contrast-breakdown", "--items", str(items), "--predictions", str(preds),
                 "--sentence-encoder", "--resamples", "100", "--out", str(out)]) == 0
    cb = json.loads((out / "contrast-breakdown.json").read_text())
    assert "verb antonyms" in cb["columns"]
    for name in ("blind-text", "sensitivity", "contrast-breakdown"):
        (artifacts_dir / f"cli_{name}.png").write_bytes((out / f"{name}.png").read_bytes())


def test_duplicates_cli_on_text_file(tmp_path, capsys):
    pytest.importorskip("spacy")
    caps = tmp_path / "caps.txt"
    caps.write_text("a dog runs fast\na cat runs fast\na man rides a horse\n\n")
    code = main(["analyze", "duplicates", "--captions", str(caps), "--pos", "noun", "verb", "--max-removed", "2",
                 "--out", str(tmp_path / "o")])
    if code != 0:
        pytest.skip("no spaCy English pipeline: " + capsys.readouterr().err)
    data = json.loads((tmp_path / "o" / "duplicates.json").read_text())
    assert data["details"]["shares"]["noun"][0] == pytest.approx(2 / 3)
    assert main(["analyze", "duplicates", "--captions", str(caps), "--pos", "pronoun", "--out", str(tmp_path / "p")]) == 2


def test_help_lists_every_analysis(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    text = capsys.readouterr().out
    for name in ("label-correction", "pooling-bias", "judgment-budget", "overlap", "caption-length",
                 "contrast-breakdown", "sensitivity", "blind-text", "duplicates"):
        assert name in text


def test_contrast_breakdown_with_a_models_own_text_encoder(built_contrast_sets, tmp_path):
    pytest.importorskip("transformers")
    from hardneg.analysis.inputs import read_mc_items

    root, _, items = built_contrast_sets
    mc = read_mc_items(items)
    n = len(mc)
    rng = np.random.default_rng(0)
    preds = write_predictions(tmp_path / "p.parquet", mc.ids, [rng.random(len(c)) for c in mc.captions],
                              task="multiple_choice", model_id="random")
    out = tmp_path / "o"
    assert main(["analyze", "contrast-breakdown", "--items", str(items), "--predictions", preds, "--sentence-encoder",
                 "--text-encoder", "tiny-clip", "--resamples", "50", "--out", str(out)]) == 0
    data = json.loads((out / "contrast-breakdown.json").read_text())
    assert data["columns"] == ["model", "all", "verb antonyms", "tiny-clip text High", "tiny-clip text Low"]
    assert data["params"]["sizes"]["tiny-clip text High"] == 1 and data["params"]["items"] == n  # ceil(0.15 * 4)
