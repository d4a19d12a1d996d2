"""`hardneg list`, `hardneg run`, `hardneg quickstart`: what they print and write, from declarations only."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from hardneg.run import config_results

from hardneg import benchmarks
from hardneg.cli import main

SRC = Path(__file__).resolve().parents[2] / "src" / "hardneg"
FRONT_DOOR_CODE = ["run.py", "cli/run.py", "cli/list_benchmarks.py", "cli/quickstart.py", "models/protocol.py"]


@pytest.mark.parametrize("path", FRONT_DOOR_CODE)
def test_no_benchmark_is_named_in_the_code(path):
    """Everything benchmark-specific comes from declarations: no string constant is a benchmark name."""
    names = set(benchmarks.names())
    tree = ast.parse((SRC / path).read_text(encoding="utf-8"))
    named = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in names]
    assert not named, f"{path} names benchmarks {named}"


def test_list_json_from_built_folders(built, capsys):
    import datasets

    assert main(["list", "--json", "--data", str(built)]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in entries] == benchmarks.names()
    for e in entries:
        decl = benchmarks.get(e["name"])
        assert (e["task"], e["hub_id"], e["license"], e["paper"]) == (decl.task, decl.hub_id, list(decl.licenses), decl.paper_url)
        assert e["metrics"] == decl.headline
        if not (built / e["name"]).is_dir():
            assert e["sizes"] == {}
            continue
        assert e["sizes_from"] == str(built) and e["sizes"]
        for config, size in e["sizes"].items():  # rows as `datasets` reads them
            ds = datasets.load_dataset(str(built / e["name"]), config)
            assert size["rows"] == sum(len(split) for split in ds.values()) == sum(size["splits"].values())
            for companion in decl.companion_suffixes:
                key = companion.strip("-_")
                other = datasets.load_dataset(str(built / e["name"]), config + companion)
                assert size[key] == sum(len(split) for split in other.values())


def test_list_text_with_samples_and_without(capsys):
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    for decl in benchmarks.all_benchmarks().values():
        assert f"{decl.name}: {decl.title} [{decl.task}]" in text and decl.hub_id in text and decl.paper_url in text
    assert "rows" in text and "(sizes: built-in sample)" in text
    assert main(["list", "--no-samples"]) == 0
    bare = capsys.readouterr().out
    assert "rows" not in bare and all(n in bare for n in benchmarks.names())
    assert main(["list", "--data", "/no/such/folder"]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("task", [
    "multiple_choice",
    "retrieval",
])
def test_run_cli_constant_scorer_lands_on_chance_everywhere(tmp_path, capsys, task):
    """The constant scorer is chance by definition: every headline value of every config equals its chance."""
    names = [n for n, b in benchmarks.all_benchmarks().items() if b.sample and b.task == task]
    out = tmp_path / "run"
    assert main(["run", "--model", "constant", "--benchmarks", ",".join(names), "--out", str(out), "--resamples", "0",
                 "--no-progress", "--no-charts", "--cache-dir", str(tmp_path / "cache")]) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    assert names and {k.split("/")[0] for k in results} == set(names)
    for key, res in config_results(results).items():
        for metric in res["headline"]:
            assert res["metrics"][metric]["value"] == pytest.approx(res["chance"][metric], abs=1e-12), (key, metric)
        bench, config = key.split("/")
        assert any(line.split()[:2] == [bench, config] for line in printed.splitlines()), key
    assert "model: constant (built-in samples; ties=expected)" in printed
    # each benchmark's one number (issue 27): under its own key, combined from its configs by its declared rule,
    # and for a constant scorer exactly the same rule applied to chance; printed in the second table
    second = printed.split("one number per benchmark", 1)[1]
    for bench in names:
        number = results[bench]
        assert number["kind"] == "benchmark" and number["metric"] == benchmarks.get(bench).overall_metric.key
        assert number["value"] == pytest.approx(number["chance"][number["metric"]], abs=1e-12), bench
        assert any(line.split()[:1] == [bench] for line in second.splitlines()), bench


def test_run_cli_errors_are_clear(tmp_path, capsys):
    assert main(["run", "--model", "constant", "--benchmarks", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err
    assert main(["run", "--model", "constant", "--data", str(tmp_path / "missing"), "--out", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_quickstart_is_run_model_on_the_samples(tmp_path, capsys):
    from hardneg.run import run_model

    out = tmp_path / "qs"
    assert main(["quickstart", "--model", "constant", "--benchmarks", "feint6k,contrast_sets", "--out", str(out),
                 "--resamples", "50", "--cache-dir", str(tmp_path / "cache")]) == 0
    printed = capsys.readouterr().out
    assert "model: constant (built-in samples" in printed and "value [95% CI]" in printed
    written = json.loads((out / "results.json").read_text())
    direct = run_model("constant", "feint6k,contrast_sets", out=tmp_path / "direct", resamples=50,
                       cache_dir=tmp_path / "cache")
    assert set(written) == set(direct)
    assert {k: r["metrics"] for k, r in written.items()} == {k: r["metrics"] for k, r in json.loads(json.dumps(direct)).items()}
    assert list(out.joinpath("predictions").glob("*.png"))  # quickstart draws a chart per config
    assert main(["quickstart", "--model", "constant", "--benchmarks", "fire", "--out", str(out)]) == 2  # not empty
    assert "--overwrite" in capsys.readouterr().err
