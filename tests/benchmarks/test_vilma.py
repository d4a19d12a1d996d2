"""ViLMA: the declaration, the parser's validation, the three scores (main, proficiency, combined), the sample
and the real release."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hardneg import benchmarks
from hardneg.benchmarks.vilma import FILES, TESTS
from hardneg.datasets import build_benchmark
from hardneg.datasets.raw_common import RawFormatError
from hardneg.datasets.samples import sample_raw_dir, sample_video_ids
from hardneg.io import atomic_write_parquet
from hardneg.items import load_items, pad_rows
from hardneg.ranking import all_right, bootstrap_ci
from hardneg.results import (_value, chance_result, constant_scores, evaluate_scores, per_row_values,
                             standard_specs)
from hardneg.schema import PREDICTIONS_SCHEMA, predictions_metadata

SAMPLE = sample_raw_dir("vilma")
SPACES = Path(__file__).resolve().parents[2] / "spaces"
#: kept items per file after the authors' filter (../shared/realdata/README.md); relations and
#: change-state-inverse are not in ../shared (the paper's 5,177 include their 393 + 236)
RELEASE_COUNTS = {"counting-easy-spelled-sec": 757, "counting-hard-spelled-sec": 675,
                  "Semantic_Role_Labelling_Data_annotated": 911, "change-state-action": 314,
                  "change-state-poststate": 254, "change-state-prestate": 194, "rare-actions-noun-foils": 692,
                  "rare-actions-verb-foils": 751}


def authors_filter(folder: Path) -> dict[str, dict[str, dict]]:
    """An independent read of the release with the authors' filter (bin/eval.py, main): {file stem: {key: item}}."""
    out = {}
    for stem in FILES:
        path = folder / f"{stem}.json"
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            out[stem] = {k: v for k, v in data.items()
                         if v["mturk"]["caption"] >= 2 and v["proficiency"]["human"]["caption"] == 1}
    return out


@pytest.fixture
def hf_cache(tmp_path) -> str:
    return str(tmp_path / "hf_cache")


@pytest.fixture
def raw(tmp_path) -> Path:
    """A writable copy of the built-in sample, for corrupting."""
    return Path(shutil.copytree(SAMPLE, tmp_path / "raw"))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return build_benchmark("vilma", SAMPLE, tmp_path_factory.mktemp("vilma") / "out").out


def write_predictions(items, scores: list[list[float]], path: Path, config: str) -> Path:
    meta = predictions_metadata(task="multiple_choice", benchmark="vilma", config=config, split="test",
                                data_revision=items.revision, model_id="hand", model_revision="0",
                                frames={"n_frames": 0}, hardneg_version="0")
    atomic_write_parquet(pa.Table.from_pydict({"id": items.ids.tolist(), "scores": scores},
                                              schema=PREDICTIONS_SCHEMA.with_metadata(meta)), path)
    return path


# ----------------------------------------------------------------------------- declaration


def test_declared_once_and_found_by_the_registry():
    decl = benchmarks.get("vilma")
    assert decl.task == "multiple_choice" and decl.headline == ["Accuracy", "Proficiency", "Combined"]
    assert decl.metric("Accuracy").where == ("part", "main") and decl.metric("Proficiency").where == ("part", "proficiency")
    assert decl.metric("Combined").all_of == "item_key" and decl.metric("Combined").where is None
    assert all(decl.metric(k).source == "R@1" and decl.metric(k).over == "category" for k in decl.headline)
    assert decl.item_columns == ("part", "item_key")
    assert decl.original_ties == "argmax" and "bin/multi_eval.py" in decl.original_ties_note
    assert decl.licenses == ("mit",) and "kesen2024vilma" in decl.citation and "ICLR" in decl.citation
    assert "vilma" in benchmarks.names() and benchmarks.by_hub_id(decl.hub_id) is decl
    assert "proficiency" in benchmarks.negative_types()


def test_a_metric_reading_an_undeclared_column_is_refused():
    from hardneg.benchmarks import Benchmark, Metric

    decl = benchmarks.get("vilma")
    fields = {f: getattr(decl, f) for f in decl.__dataclass_fields__}
    with pytest.raises(ValueError, match=r"metric Combined uses columns \['pair'\]; declare"):
        Benchmark(**{**fields, "metrics": (Metric("Combined", "R@1", "x", all_of="pair"),)})


# ----------------------------------------------------------------------------- the sample


def test_sample_builds_with_the_authors_filter_and_a_config_per_file(built, hf_cache):
    datasets = pytest.importorskip("datasets")
    kept = authors_filter(SAMPLE)
    assert set(kept) == set(FILES)  # every release file, the two absent from ../shared included
    report = json.loads((built / "build_report.json").read_text())
    counts = {FILES[s][0]: {"test": 2 * len(k)} for s, k in kept.items()}
    counts["all"] = {"test": 2 * sum(len(k) for k in kept.values())}
    assert report["counts"] == counts and report["items_kept"] == 15 and report["items_read"] == 21
    for stem, items in kept.items():
        config = FILES[stem][0]
        ds = datasets.load_dataset(str(built), config, split="test", cache_dir=hf_cache)
        assert ds["id"] == [i for k in items for i in (f"{config}:{k}", f"{config}:{k}:proficiency")]
        assert ds["captions"] == [c for v in items.values() for c in (
            [v["caption"], *v["foils"]], [v["proficiency"]["caption"], *v["proficiency"]["foils"]])]
        assert set(ds["label"]) == {0} and ds["part"] == ["main", "proficiency"] * len(items)
        assert ds["item_key"] == [f"{config}:{k}" for k in items for _ in (0, 1)]
        assert set(ds["category"]) == {FILES[stem][1]}
        info = report["per_file"][f"{stem}.json"]
        dropped = info["filtered_out"]
        raw_keys = list(json.loads((SAMPLE / f"{stem}.json").read_text()))
        assert info["items_kept"] == len(items) and info["items_read"] == len(raw_keys)
        assert sorted(dropped["main_test_not_validated"]["keys"] + dropped["proficiency_not_validated"]["keys"]) \
            == sorted(k for k in raw_keys if k not in items)
    card = (built / "README.md").read_text()
    assert "license: mit" in card and "kesen2024vilma" in card
    assert "21 items read from 10 test files; 15 kept by the authors' filter" in card


def test_a_hand_checked_item(built, hf_cache):
    """Situation awareness item "4" of the sample: two foils, a VidSitu clip, foiled by RoBERTa masked filling."""
    datasets = pytest.importorskip("datasets")
    ds = datasets.load_dataset(str(built), "situation-awareness", split="test", cache_dir=hf_cache)
    main, prof = ds[2], ds[3]
    assert main["id"] == "situation-awareness:4" and prof["id"] == "situation-awareness:4:proficiency"
    assert main["captions"] == ["The dog chases the ball across the yard.", "The dog carries the ball across the yard.",
                                "The dog kicks the ball across the yard."]
    assert prof["captions"] == ["The dog runs in the yard.", "The dog sleeps in the yard."]
    assert main["video_id"] == prof["video_id"] == "Pn3Vb8Kd1Wq_0_10"  # youtube_id, start 0.0, end 10.0
    assert main["source_dataset"] == "vidsitu" and main["source_split"] == "valid"
    assert main["category"] == "situation-awareness" and main["item_key"] == prof["item_key"] == "situation-awareness:4"
    assert main["negative_types"] == ["positive", "situation", "situation"]
    assert prof["negative_types"] == ["positive", "proficiency"]
    foil = main["provenance"][1]
    assert foil["origin"] == "generator" and foil["generator"] == "vilma-situation-awareness"
    assert foil["rule"] == "MLM with Roberta"
    details = json.loads(foil["details"])
    assert details["release_file"] == "Semantic_Role_Labelling_Data_annotated.json" and details["key"] == "4"
    assert details["test"] == "situation-awareness" and details["mturk"] == {"foil": 1, "caption": 2, "other": 0}
    source = json.loads(main["provenance"][0]["details"])
    assert source["dataset"] == "VidSitu" and source["source_video"] == "Pn3Vb8Kd1Wq"
    assert (source["start_time"], source["end_time"], source["time_unit"]) == (0.0, 10.0, "sec")
    swapped = ds[0]["provenance"][1]  # item "0": the authors' manual actor swap
    assert swapped["origin"] == "human" and swapped["rule"] == "Manual Swapping" and swapped["generator"] is None
    assert json.loads(prof["provenance"][1]["details"])["human"] == {"foil": 0, "caption": 1, "other": 0}


def test_clip_ids_follow_how_the_authors_find_each_video(built):
    items = load_items(str(built), "all")
    by_id = dict(zip(items.ids.tolist(), items.clusters.tolist()))
    assert by_id["counting-easy:counting-easy-001-0010-0040-2-4-0-s"] == "001_jumping_jacks_0.5_2.1667"  # QUVA file
    assert by_id["counting-hard:counting-hard-001-0000-0090-7-9-0-s"] == "001_jumping_jacks_0_4.5"
    assert by_id["spatial-relations:0"] == "40321"  # SSv2 dataset_idx, no times: the whole video
    assert by_id["change-state-action:change-state-action-0002"] == "40321"  # the same clip, one cluster
    assert by_id["spatial-relations:1"] == "6H78U_3.2_9.8"  # STAR video_file
    assert by_id["change-state-inverse:change-state-inverse-0001"] == "Tr4pZ0mLq8E_31_38.5"  # COIN youtube_id


def test_sample_videos_txt_lists_exactly_the_videos(built):
    videos = set(load_items(str(built), "all").clusters.tolist())
    listed = sample_video_ids("vilma")
    assert len(listed) == len(set(listed)) and set(listed) == videos


def test_rebuild_is_byte_identical_and_every_file_is_listed(built, tmp_path):
    again = build_benchmark("vilma", SAMPLE, tmp_path / "b")
    files = sorted(p.relative_to(built).as_posix() for p in built.rglob("*") if p.is_file())
    assert len(files) == 13  # 11 Parquet files, the card, the report
    assert all((built / f).read_bytes() == (again.out / f).read_bytes() for f in files)
    status = {e["path"]: e["status"] for e in again.report["files"]}
    assert status == {**{f"{s}.json": "used" for s in FILES}, "videos.txt": "ignored"}


# ----------------------------------------------------------------------------- the three scores


def hand_scores(items) -> list[list[float]]:
    """Item k of the config (in order): main right when k % 3 == 0, all tied when k % 3 == 1, wrong otherwise;
    proficiency right when k is even, tied otherwise."""
    out = []
    for r in range(len(items)):
        k, c = r // 2, int(items.n_candidates[r])
        if items.groups["part"][r] == "main":
            out.append([1.0] + [0.0] * (c - 1) if k % 3 == 0 else [0.5] * c if k % 3 == 1 else [0.0] + [1.0] * (c - 1))
        else:
            out.append([1.0] + [0.0] * (c - 1) if k % 2 == 0 else [0.5] * c)
    return out


def by_hand(items, ties: str) -> dict[str, float]:
    """The three scores from the rule in `hand_scores`, per test then averaged over tests, without the engine."""
    per_test: dict[str, dict[str, list[float]]] = {}
    for r in range(0, len(items), 2):
        k, c_main, c_prof = r // 2, int(items.n_candidates[r]), int(items.n_candidates[r + 1])
        if ties == "argmax":  # a tie goes to index 0, the caption
            main, prof = (1.0 if k % 3 in (0, 1) else 0.0), 1.0
        else:  # expected: a tie among c candidates is right with chance 1/c
            main = 1.0 if k % 3 == 0 else 1 / c_main if k % 3 == 1 else 0.0
            prof = 1.0 if k % 2 == 0 else 1 / c_prof
        t = per_test.setdefault(items.groups["category"][r], {"Accuracy": [], "Proficiency": [], "Combined": []})
        t["Accuracy"].append(main), t["Proficiency"].append(prof), t["Combined"].append(main * prof)
    return {m: float(np.mean([np.mean(t[m]) for t in per_test.values()])) for m in ("Accuracy", "Proficiency", "Combined")}


def test_scores_of_the_sample_against_a_hand_computation_through_evaluate(built, tmp_path):
    from hardneg.evaluation import evaluate_predictions

    items = load_items(str(built), "all")
    pred = write_predictions(items, hand_scores(items), tmp_path / "p.parquet", "all")
    for ties in ("argmax", "expected", "original"):
        res = evaluate_predictions(pred, dataset=str(built), ties=ties, n_resamples=0)
        expected = by_hand(items, "argmax" if ties == "original" else ties)
        for key, value in expected.items():
            assert res["metrics"][key]["value"] == pytest.approx(value), (ties, key)
    # a literal check: situation awareness has items k = 0, 1 (k = 2 is filtered out by the authors' rule)
    sa = load_items(str(built), "situation-awareness")
    res = evaluate_scores(sa, *pad_rows(hand_scores(sa)),
                          ties="expected", n_resamples=0)
    # item 0: main right, proficiency right; item "4" (k=1): main 3-way tie (1/3), proficiency tie (1/2)
    assert res.value("Accuracy") == pytest.approx((1 + 1 / 3) / 2)
    assert res.value("Proficiency") == pytest.approx((1 + 1 / 2) / 2)
    assert res.value("Combined") == pytest.approx((1 + 1 / 6) / 2)
    assert "R@1" not in res.metrics  # a choice among options is Accuracy; no pooled R@1 of both tests (hardneg.vocabulary)


def authors_scores(raw: Path, stem: str, main: dict[str, list[float]], prof: dict[str, list[float]]) -> dict[str, float]:
    """bin/eval.py (acc_r of each test) and bin/multi_eval.py (acc_r of both), re-done in NumPy from the raw file."""
    keys = list(authors_filter(raw)[stem])
    main_ok = np.array([np.argmax(main[k]) == 0 for k in keys])
    prof_ok = np.array([np.argmax(prof[k]) == 0 for k in keys])
    return {"Accuracy": main_ok.mean(), "Proficiency": prof_ok.mean(), "Combined": (main_ok & prof_ok).mean()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_original_rule_equals_the_authors_scripts_with_ties(built, tmp_path, seed):
    rng = np.random.default_rng(seed)
    for stem, (config, _) in FILES.items():
        items = load_items(str(built), config)
        # scores on a coarse grid, so ties are frequent
        scores = [rng.integers(0, 3, int(c)).astype(float).tolist() for c in items.n_candidates]
        main = {i.split(":", 1)[1]: s for i, s in zip(items.ids, scores) if not i.endswith(":proficiency")}
        prof = {i.split(":", 1)[1][: -len(":proficiency")]: s for i, s in zip(items.ids, scores) if i.endswith(":proficiency")}
        expected = authors_scores(SAMPLE, stem, main, prof)
        mat, mask = pad_rows(scores)
        res = evaluate_scores(items, mat, mask, ties="argmax", n_resamples=0)
        for key, value in expected.items():
            assert res.value(key) == pytest.approx(value), (config, key)


def test_combined_interval_is_the_one_cluster_bootstrap_by_video(built):
    """Per test file: the engine's Combined interval is `bootstrap_ci` of the per-item both-right values by clip."""
    rng = np.random.default_rng(3)
    for config in ("counting-easy", "situation-awareness", "change-state-inverse", "spatial-relations"):
        items = load_items(str(built), config)
        mat, mask = pad_rows([rng.normal(size=int(c)).tolist() for c in items.n_candidates])
        res = evaluate_scores(items, mat, mask, ties="argmax", n_resamples=500, seed=7, keep_per_example=True)
        ok = res.per_example["R@1"]
        both = ok[0::2] * ok[1::2]  # rows come in (main, proficiency) pairs
        ci = bootstrap_ci(both, items.clusters[0::2], n_resamples=500, seed=7)
        for key in ("Combined", f"Combined_{items.groups['category'][0]}"):
            got = res.metrics[key]
            assert got["value"] == pytest.approx(ci.estimate)
            assert (got["low"], got["high"]) == pytest.approx((min(ci.low, ci.estimate), max(ci.high, ci.estimate)))
    items = load_items(str(built), "all")
    mat, mask = pad_rows([rng.normal(size=int(c)).tolist() for c in items.n_candidates])
    res = evaluate_scores(items, mat, mask, ties="argmax", n_resamples=50, keep_per_example=True)
    ok = res.per_example["R@1"]
    both, tests = ok[0::2] * ok[1::2], items.groups["category"][0::2]
    assert res.value("Combined") == pytest.approx(np.mean([both[tests == t].mean() for t in TESTS]))
    assert res.metrics["Combined"]["low"] <= res.value("Combined") <= res.metrics["Combined"]["high"]


def test_the_evaluate_module_gives_the_engines_three_scores(built):
    """rcad_accuracy on a config's rows: R@1 of the main rows = Accuracy, of the proficiency rows = Proficiency,
    and with `group_ids` = item_key its Combined (value and interval) = the engine's."""
    evaluate = pytest.importorskip("evaluate")
    import uuid

    from hardneg.metric_modules import metric_path

    module = evaluate.load(metric_path("rcad_accuracy"), experiment_id=uuid.uuid4().hex)
    rng = np.random.default_rng(5)
    for config in ("counting-easy", "situation-awareness", "change-state-inverse"):
        items = load_items(str(built), config)
        scores = [rng.integers(0, 2, int(c)).astype(float).tolist() for c in items.n_candidates]
        res = evaluate_scores(items, *pad_rows(scores), n_resamples=300, seed=2)
        common = dict(ks=[1], n_resamples=300, seed=2)
        out = module.compute(predictions=scores, references=items.label.tolist(), video_ids=items.clusters.tolist(),
                             group_ids=items.groups["item_key"].tolist(), **common)
        assert out["Combined"] == pytest.approx(res.value("Combined"))
        assert out["Combined_ci"] == pytest.approx([res.metrics["Combined"]["low"], res.metrics["Combined"]["high"]])
        for key, part in (("Accuracy", "main"), ("Proficiency", "proficiency")):
            rows = np.flatnonzero(items.groups["part"] == part)
            one = module.compute(predictions=[scores[r] for r in rows], references=items.label[rows].tolist(),
                                 **common)
            assert one["R@1"] == pytest.approx(res.value(key))
    with_constant = module.compute(predictions=[[0.0, 0.0]] * 4, references=[0] * 4, group_ids=["a", "a", "b", "b"],
                                   n_resamples=0)
    assert with_constant["Combined"] == 0.25 and "Combined" not in module.compute(
        predictions=[[1.0, 0.0]], references=[0], n_resamples=0)


def test_all_right_and_paired_test_weights(built):
    values = np.array([1.0, 1.0, 0.0, 1.0, 0.5, 0.5, 1.0])
    groups = np.array(["a", "a", "b", "b", "c", "c", ""])
    assert all_right(values, groups).tolist() == [1.0, 1.0, 0.0, 0.0, 0.25, 0.25, 1.0]  # "" is a group of its own
    decl = benchmarks.get("vilma")
    items = load_items(str(built), "all")
    per = {"R@1": np.random.default_rng(0).random(len(items))}
    for spec in standard_specs(decl):
        if spec.source == "R@1":
            assert per_row_values(spec, per, items.groups).mean() == pytest.approx(_value(spec, per, items.groups))


def test_a_subset_without_main_rows_has_no_accuracy_and_no_warning(built):
    """`hardneg evaluate`'s per-negative-type view scores subsets, e.g. only the proficiency rows."""
    import warnings

    from hardneg.items import subset_items

    items = load_items(str(built), "all")
    rows = np.flatnonzero(items.groups["part"] == "proficiency")
    sub = subset_items(items, rows)
    mat, mask = constant_scores(sub)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = evaluate_scores(sub, mat, mask, n_resamples=20).to_dict()
    assert res["metrics"]["Accuracy"] == {"value": None} and res["metrics"]["Proficiency"]["value"] == 0.5
    assert res["metrics"]["Combined"]["value"] == 0.5  # groups are formed from the rows scored: one row each


def test_the_bootstrap_honours_a_row_selection_for_every_kind_of_statistic():
    """`where` and `all_of` select rows; each kind of statistic must then equal the same statistic on the
    selected rows alone (every cluster keeps a row, so the draws are the same)."""
    from hardneg.ranking.bootstrap import Stat, joint_intervals

    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(12), 4)
    values = rng.integers(1, 5, clusters.size).astype(float)
    groups = np.tile(np.array(["x", "y"]), clusters.size // 2)
    select = np.tile(np.array([True, True, False, True]), 12)  # keeps rows of every cluster and both groups
    for kind in ("mean", "median", "mean_of_group_means"):
        g = groups if kind == "mean_of_group_means" else None
        whole = joint_intervals({"s": Stat(kind, values, select=select, groups=g)}, clusters, 200, 0.9, 1)["s"]
        alone = joint_intervals({"s": Stat(kind, values[select], groups=None if g is None else g[select])},
                                clusters[select], 200, 0.9, 1)["s"]
        assert whole == pytest.approx(alone), kind


def test_constant_scorer_is_chance_under_expected_ties_and_one_under_the_authors_rule(built):
    items = load_items(str(built), "all")
    chance = chance_result(items, n_resamples=0)
    for key in ("Accuracy", "Proficiency", "Combined"):
        assert chance.value(key) == chance.chance[key]
    assert chance.value("Proficiency") == 0.5 and chance.value("Combined_spatial-relations") == 0.25
    # situation awareness has a three-way main test: chance (1/2 + 1/3) / 2
    assert chance.value("Accuracy_situation-awareness") == pytest.approx((1 / 2 + 1 / 3) / 2)
    mat, mask = constant_scores(items)
    assert evaluate_scores(items, mat, mask, ties="argmax", n_resamples=0).value("Combined") == 1.0


def test_board_and_demo_pick_it_up_through_the_declaration(built, tmp_path):
    from hardneg.items import load_item_sets
    from hardneg.leaderboard import Leaderboard

    board = Leaderboard(tmp_path / "lb", load_item_sets(built, "vilma"), n_resamples=20, compute_blind=False)
    names = [c.name for c in board.columns("vilma")]
    for key in ("Accuracy", "Proficiency", "Combined"):
        assert f"{key} · counting-easy" in names and f"{key} · all" in names
    # the tab shows `all`'s summary columns by default (issue 27); every config's columns are one click away
    table = board.table("vilma")
    row = table[table["Model"] == "random (exact chance)"].iloc[0]
    assert row["Proficiency · all (%)"].startswith("50.0") and "Combined · spatial-relations (%)" not in table
    table = board.table("vilma", shown=["Combined · spatial-relations", "Proficiency · all"])
    row = table[table["Model"] == "random (exact chance)"].iloc[0]
    assert row["Combined · spatial-relations (%)"].startswith("25.0") and row["Proficiency · all (%)"].startswith("50.0")
    data = tmp_path / "data"
    shutil.copytree(built, data / "vilma")
    sys.path.insert(0, str(SPACES / "demo"))
    try:
        import demo_logic
    finally:
        sys.path.remove(str(SPACES / "demo"))
    store = demo_logic.ExampleStore.load(data)
    assert "vilma" in store.benchmarks() and "counting-easy" in store.configs("vilma")


# ----------------------------------------------------------------------------- validation


def edit(raw: Path, stem: str, change) -> None:
    """Apply `change(data)` to one sample file and write it back."""
    path = raw / f"{stem}.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=4))


KEY = "counting-easy-001-0010-0040-2-4-0-s"


def _set(path: list[str], value):
    def change(data):
        obj = data[KEY]
        for p in path[:-1]:
            obj = obj[p]
        if value is _DELETE:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
    return change


_DELETE = object()


@pytest.mark.parametrize("change,words", [
    (_set(["mturk"], _DELETE), ["field 'mturk' is missing", "bin/eval.py"]),
    (_set(["proficiency"], _DELETE), ["field 'proficiency' is missing"]),
    (_set(["proficiency"], "a man skips rope."), ["field 'proficiency' is str, not an object"]),
    (_set(["mturk"], [3, 0, 0]), ["field 'mturk' is list, not an object of votes"]),
    (_set(["mturk", "caption"], "3"), ["field 'mturk.caption' is '3', not an integer vote count"]),
    (_set(["proficiency", "human"], _DELETE), ["field 'proficiency.human' is missing"]),
    (_set(["foils"], "a girl does a jumping jack exactly four times."), ["field 'foils' is str", "not a non-empty list"]),
    (_set(["foils"], []), ["field 'foils' is list", "not a non-empty list"]),
    (_set(["foils"], ["ok", 4]), ["foils[1] is '4', not a non-empty sentence"]),
    (_set(["proficiency", "foils"], None), ["field 'proficiency.foils' is missing"]),
    (_set(["caption"], ""), ["field 'caption' is str ''"]),
    (_set(["dataset"], "UCF101"), ["field 'dataset' is 'UCF101', not a known source dataset"]),
    (_set(["video_file"], None), ["field 'video_file' is 'None', but QUVA videos are found by it"]),
    (_set(["end_time"], 0.1), ["end_time 0.1 is not after start_time 0.5"]),
    (_set(["start_time"], "0:05"), ["field 'start_time' is '0:05', not a number"]),
    (_set(["time_unit"], "frames"), ["field 'time_unit' is 'frames'"]),
    (_set(["foiling_methods"], 3), ["field 'foiling_methods' is '3'"]),
])
def test_malformed_items_are_errors_naming_file_item_field_and_fix(raw, tmp_path, change, words):
    edit(raw, "counting-easy-spelled-sec", change)
    with pytest.raises(RawFormatError) as err:
        build_benchmark("vilma", raw, tmp_path / "out")
    message = str(err.value)
    assert "counting-easy-spelled-sec.json" in message and f"item {KEY!r}" in message and "Fix:" in message
    for w in words:
        assert w in message
    assert not (tmp_path / "out").exists()


def test_items_the_filter_drops_are_still_validated(raw, tmp_path):
    """Item "7" fails the proficiency check (human.caption 0): its broken foils are an error all the same."""
    edit(raw, "Semantic_Role_Labelling_Data_annotated", lambda d: d["7"].update(foils={"a": 1}))
    with pytest.raises(RawFormatError, match=r"item '7': field 'foils' is dict"):
        build_benchmark("vilma", raw, tmp_path / "out")


def test_a_duplicate_key_is_an_error_naming_it(raw, tmp_path):
    path = raw / "relations.json"
    text = path.read_text()
    first = text.index('"1": {')
    path.write_text(text.rstrip()[:-1].rstrip() + ",\n" + text[first:].rstrip()[:-1].rstrip() + "\n}\n")
    assert path.read_text().count('"1": {') == 2
    with pytest.raises(RawFormatError) as err:
        build_benchmark("vilma", raw, tmp_path / "out")
    assert "relations.json" in str(err.value) and "'1'" in str(err.value) and "Fix:" in str(err.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content,words", [
    ("[1, 2]", ["the top level is list, not an object"]),
    ('{"0": [1, 2]}', ["item '0': the item is list, not an object"]),
    ('{"0": {"caption": "x"', ["invalid JSON"]),
])
def test_malformed_files(raw, tmp_path, content, words):
    (raw / "relations.json").write_text(content)
    with pytest.raises(RawFormatError) as err:
        build_benchmark("vilma", raw, tmp_path / "out")
    assert "relations.json" in str(err.value)
    for w in words:
        assert w in str(err.value)


def test_missing_files_are_reported_other_files_ignored_and_an_empty_folder_is_an_error(raw, tmp_path):
    (raw / "relations.json").unlink()
    (raw / "counting-easy-digits-sec.json").write_text("{}")  # another file of the release, not a test
    result = build_benchmark("vilma", raw, tmp_path / "out")
    assert result.report["missing_files"] == ["relations.json"] and "spatial-relations" not in result.report["counts"]
    assert "Test files missing from the raw folder: relations.json" in (result.out / "README.md").read_text()
    status = {e["path"]: e for e in result.report["files"]}
    assert status["counting-easy-digits-sec.json"]["status"] == "ignored"
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("hello")
    with pytest.raises(FileNotFoundError, match=r"no vilma release file found"):
        build_benchmark("vilma", empty, tmp_path / "out2")


def test_a_foil_identical_to_its_caption_is_kept_and_reported(raw, tmp_path):
    edit(raw, "relations", lambda d: d["1"].update(foils=["A person puts the towel  onto the shelf"]))
    result = build_benchmark("vilma", raw, tmp_path / "out")
    assert result.report["per_file"]["relations.json"]["foil_identical_to_caption"] == ["1"]
    assert result.report["counts"]["spatial-relations"] == {"test": 4}
    assert "relations.json: 1." in (result.out / "README.md").read_text()


def test_a_file_with_no_item_passing_the_filter_is_an_error(raw, tmp_path):
    edit(raw, "relations", lambda d: [v["mturk"].update(caption=1) for v in d.values()])
    with pytest.raises(ValueError, match=r"relations.json: no item passes the authors' filter"):
        build_benchmark("vilma", raw, tmp_path / "out")


# ----------------------------------------------------------------------------- the real release


@pytest.mark.realdata
def test_real_release(realdata, tmp_path, hf_cache):
    datasets = pytest.importorskip("datasets")
    raw = realdata / "vilma"
    kept = authors_filter(raw)
    assert {s: len(k) for s, k in kept.items()} == RELEASE_COUNTS  # the independent read agrees with the README
    result = build_benchmark("vilma", raw, tmp_path / "vilma")
    report = result.report
    status = {e["path"]: e["status"] for e in report["files"]}
    assert status == {**{f"{s}.json": "used" for s in RELEASE_COUNTS}, "LICENSE": "ignored"}
    assert {s: report["per_file"][f"{s}.json"]["items_kept"] for s in RELEASE_COUNTS} == RELEASE_COUNTS
    assert report["items_kept"] == 4548 == sum(RELEASE_COUNTS.values()) == 5177 - 393 - 236
    assert report["counts"]["all"] == {"test": 2 * 4548}
    assert report["missing_files"] == ["change-state-inverse.json", "relations.json"]
    same = {f: info["foil_identical_to_caption"] for f, info in report["per_file"].items() if info["foil_identical_to_caption"]}
    assert same == {"rare-actions-noun-foils.json": ["actions-noun-active-0858"]}  # 'hammering an egg' twice
    assert "1 kept item(s) have a foil identical to its caption" in (result.out / "README.md").read_text()
    for stem in ("counting-easy-spelled-sec", "Semantic_Role_Labelling_Data_annotated"):
        config = FILES[stem][0]
        ds = datasets.load_dataset(str(result.out), config, split="test", cache_dir=hf_cache)
        assert ds["id"][0::2] == [f"{config}:{k}" for k in kept[stem]]
        assert [c[0] for c in ds["captions"][0::2]] == [v["caption"] for v in kept[stem].values()]
        assert [c[1:] for c in ds["captions"][1::2]] == [v["proficiency"]["foils"] for v in kept[stem].values()]
    items = load_items(str(result.out), "all")
    zeros = constant_scores(items)
    res = evaluate_scores(items, *zeros, n_resamples=0)
    assert res.value("Proficiency") == 0.5 and res.value("Combined_action-counting") == 0.25
    assert all(res.value(k) == res.chance[k] for k in ("Accuracy", "Proficiency", "Combined"))
    assert evaluate_scores(items, *zeros, ties="argmax", n_resamples=0).value("Combined") == 1.0
