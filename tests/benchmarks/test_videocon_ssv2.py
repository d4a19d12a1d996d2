"""VideoCon SSv2-Temporal: the declaration, the parser's validation, the sample, and the paper's numbers
recomputed from the authors' released scores."""

from __future__ import annotations

import csv
import io
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from hardneg import benchmarks
from hardneg.benchmarks.videocon_release import PROMPT, description_in, video_id_of
from hardneg.cli import main
from hardneg.datasets import build_benchmark
from hardneg.datasets.raw_common import RawFormatError
from hardneg.datasets.samples import sample_raw_dir, sample_video_ids
from hardneg.evaluation import evaluate_predictions
from hardneg.items import load_benchmark, load_items
from hardneg.results import chance_result

NAME = "videocon-ssv2"
SAMPLE = sample_raw_dir(NAME)
EVAL = "eval_ssv2_temporal.csv"


def read_eval(path: Path) -> list[dict]:
    """An independent read of the evaluation CSV (the csv module, not the parser)."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def read_scores(path: Path) -> dict[tuple[str, str], float]:
    with open(path, newline="", encoding="utf-8") as f:
        return {(r[0], r[1]): float(r[2]) for r in csv.reader(f)}


def calc_ssv2(eval_rows: list[dict], scores: dict, kind: str | None = None) -> dict[str, float]:
    """src/calc_ssv2.py main(), written again: merge, sort by videopath, group by caption, np.argsort(-pred)."""
    groups: dict[str, list[tuple[str, int, float]]] = {}
    for r in eval_rows:
        groups.setdefault(r["caption"], []).append((r["videopath"], int(r["match"]), scores[(r["videopath"], r["caption"])]))
    ap, hit = [], {1: [], 5: [], 10: []}
    for caption in sorted(groups):
        rows = sorted(groups[caption])
        pred = np.array([s for _, _, s in rows])
        labels = [m for _, m, _ in rows]
        ranks = np.argsort(-pred) if kind is None else np.argsort(-pred, kind=kind)
        hits, precision = 0, []
        for i, r in enumerate(ranks):
            if labels[r] == 1:
                hits += 1
                precision.append(hits / (i + 1))
        ap.append(sum(precision) / len(precision))
        for k in hit:
            hit[k].append(int(any(labels[r] for r in ranks[:k])))
    return {"mAP": float(np.mean(ap)), **{f"C@{k}": float(np.mean(v)) for k, v in hit.items()}}


def expected_ap(pred: np.ndarray, labels: list[int]) -> float:
    """Mean AP over every order of tied videos, by enumerating them (small rows only)."""
    values = sorted(set(pred.tolist()), reverse=True)
    blocks = [[i for i in range(len(pred)) if pred[i] == v] for v in values]
    aps = []
    for perm in itertools.product(*[itertools.permutations(b) for b in blocks]):
        order = [i for block in perm for i in block]
        hits, precision = 0, []
        for pos, i in enumerate(order, 1):
            if labels[i]:
                hits += 1
                precision.append(hits / pos)
        aps.append(np.mean(precision))
    return float(np.mean(aps))


@pytest.fixture
def raw(tmp_path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "raw"))


def write_eval(path: Path, rows: list[dict]) -> None:
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, ["videopath", "caption", "match"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


# ----------------------------------------------------------------------------- declaration


def test_declared_once_with_the_authors_rule_and_importer():
    decl = benchmarks.get(NAME)
    assert decl.task == "retrieval" and decl.headline == ["mAP", "C@1", "C@5", "C@10"]
    assert decl.original_ties == "argsort" and "calc_ssv2.py" in decl.original_ties_note
    assert decl.original_positive is False and decl.licenses == ("mit",)
    assert [i.name for i in decl.score_importers] == ["videocon-scores-csv"]
    assert benchmarks.by_hub_id(decl.hub_id) is decl and NAME in benchmarks.names()


def test_prompt_helpers():
    prompt = PROMPT.format(caption="Covering [something] with [something]")
    assert description_in(prompt) == "Covering [something] with [something]"
    assert description_in('Does this video entail the description: "a "quoted" word"?\nAI: ') == 'a "quoted" word'
    assert description_in("Human: <|video|>\nAI: ") is None
    assert description_in('Does this video entail the description: ""?') is None
    assert video_id_of("videos/104599.avi") == "104599" and video_id_of("/x/1006/4010069381.mp4") == "4010069381"


# ----------------------------------------------------------------------------- the sample


def test_sample_builds_with_hand_checked_tables(tmp_path):
    result = build_benchmark(NAME, SAMPLE, tmp_path / "out")
    assert result.report["counts"] == {"ssv2-temporal": {"test": 18}, "ssv2-temporal-queries": {"test": 3},
                                       "ssv2-temporal-videos": {"test": 6}}
    data = load_benchmark(str(result.out), "ssv2-temporal")
    assert data.videos.column("video_id").to_pylist() == ["200011", "200012", "200013", "200014", "200015", "200016"]
    q = data.queries.to_pylist()
    assert [r["text"] for r in q] == ["Pushing [something] from left to right", "Pushing [something] from right to left",
                                      "Putting [something] into [something]"]
    assert [r["relevant"] for r in q] == [[0, 1], [2, 3], [4, 5]]
    assert [r["video_id"] for r in q] == ["200011", "200013", "200015"]  # the first matching video: cluster only
    assert sorted(sample_video_ids(NAME)) == data.videos.column("video_id").to_pylist()
    card = (result.out / "README.md").read_text()
    assert "license: mit" in card and "bansal2024videocon" in card
    status = {e["path"]: e["status"] for e in result.report["files"]}
    assert status == {EVAL: "used", "eval_ssv2_temporal_scores.csv": "ignored", "videos.txt": "ignored"}


def test_constant_scorer_is_chance_and_no_original_only_measures(tmp_path):
    out = build_benchmark(NAME, SAMPLE, tmp_path / "out").out
    items = load_items(str(out), "ssv2-temporal")
    res = chance_result(items, n_resamples=0)
    assert res.value("C@1") == pytest.approx(2 / 6) and res.value("mAP") == res.chance["mAP"]
    assert "R@1" not in res.metrics and "MeanR" not in res.metrics and "MRR" not in res.metrics


def test_import_and_evaluate_the_sample_scores_against_calc_ssv2(tmp_path, capsys):
    out = build_benchmark(NAME, SAMPLE, tmp_path / "out").out
    pred = tmp_path / "p.parquet"
    assert main(["import-scores", NAME, str(SAMPLE / "eval_ssv2_temporal_scores.csv"), "--data", str(out),
                 "--model-id", "toy/model", "--out", str(pred)]) == 0
    assert "3 of 3 queries" in capsys.readouterr().out
    rows, scores = read_eval(SAMPLE / EVAL), read_scores(SAMPLE / "eval_ssv2_temporal_scores.csv")
    want = calc_ssv2(rows, scores)
    # by hand: query 1 ranks 200011 first, then 200012/200013 tied (200012 first by index); query 2 is one
    # six-way tie (positions 3 and 4 for its matches); query 3 is perfect
    assert want["mAP"] == pytest.approx((1 + (1 / 3 + 2 / 4) / 2 + 1) / 3)
    assert want["C@1"] == pytest.approx(2 / 3) and want["C@5"] == 1.0
    res = evaluate_predictions(pred, dataset=str(out), ties="original", n_resamples=0)
    assert res["ties"] == "argsort"
    for key, value in want.items():
        assert res["metrics"][key]["value"] == pytest.approx(value)
    aware = res["original_rule"]["tie_aware"]
    preds = {}
    for r in rows:
        preds.setdefault(r["caption"], []).append((r["videopath"], int(r["match"]), scores[(r["videopath"], r["caption"])]))
    ap = [expected_ap(np.array([s for *_, s in sorted(v)]), [m for _, m, _ in sorted(v)]) for _, v in sorted(preds.items())]
    assert aware["mAP"] == pytest.approx(np.mean(ap))
    assert aware["C@1"] == pytest.approx((1 + 2 / 6 + 1) / 3)


# ----------------------------------------------------------------------------- validation


def _rows():
    return read_eval(SAMPLE / EVAL)


@pytest.mark.parametrize("change,words", [
    (lambda rows: rows[3].update(caption="Human: <|video|>\nHuman: Is this video about pushing?\nAI: "),
     ["row 5 (line", "no quoted description", "Fix:", "PROMPT"]),
    (lambda rows: rows[3].update(caption=rows[3]["caption"].replace("curious human", "human")),
     ["not the authors' prompt around its description"]),
    (lambda rows: rows[0].update(match="yes"), ["column 'match' is 'yes'"]),
    (lambda rows: rows.append(dict(rows[0])), ["duplicate row", "first at record 2"]),
    (lambda rows: rows.pop(4), ["has rows for 5 of the 6 videos", "--vid_per_caption"]),
    (lambda rows: [r.update(match="0") for r in rows if "into" in r["caption"]], ["has no video with match = 1"]),
    (lambda rows: rows[0].update(videopath="other/200012.avi"), ["named by two paths"]),
])
def test_malformed_rows_are_errors_naming_file_record_and_fix(raw, tmp_path, change, words):
    rows = _rows()
    change(rows)
    write_eval(raw / EVAL, rows)
    with pytest.raises(RawFormatError) as err:
        build_benchmark(NAME, raw, tmp_path / "out")
    message = str(err.value)
    assert EVAL in message and "Fix:" in message
    for w in words:
        assert w in message
    assert not (tmp_path / "out").exists()


def test_wrong_header_and_other_file_names(raw, tmp_path):
    (raw / EVAL).write_text("video,caption,match\nvideos/1.avi,x,1\n")
    with pytest.raises(RawFormatError, match="header is"):
        build_benchmark(NAME, raw, tmp_path / "out")
    (raw / EVAL).unlink()
    with pytest.raises(FileNotFoundError, match="no videocon-ssv2 release file found"):
        build_benchmark(NAME, raw, tmp_path / "out")


def test_another_evaluation_set_of_the_same_format_builds_as_its_own_config(raw, tmp_path):
    shutil.copy(raw / EVAL, raw / "eval_ssv2_events.csv")
    result = build_benchmark(NAME, raw, tmp_path / "out")
    assert [c.name for c in result.build.configs] == ["ssv2-events", "ssv2-events-queries", "ssv2-events-videos",
                                                      "ssv2-temporal", "ssv2-temporal-queries", "ssv2-temporal-videos"]


# ----------------------------------------------------------------------------- the real release


@pytest.mark.realdata
def test_real_release_counts_and_the_papers_numbers(realdata, tmp_path, capsys):
    raw = realdata / "videocon"
    result = build_benchmark(NAME, raw, tmp_path / "ssv2")
    assert result.report["counts"] == {"ssv2-temporal": {"test": 3888}, "ssv2-temporal-queries": {"test": 18},
                                       "ssv2-temporal-videos": {"test": 216}}
    per = result.report["per_config"]["ssv2-temporal"]
    assert per["matches_per_query"] == {"min": 12, "max": 12} and per["matching_rows"] == 216
    rows = read_eval(raw / EVAL)
    assert len(rows) == 3888 and len({r["caption"] for r in rows}) == 18 and len({r["videopath"] for r in rows}) == 216
    pred = tmp_path / "owl-con.parquet"
    assert main(["import-scores", NAME, str(raw / "eval_ssv2_temporal_scores.csv"), "--data", str(result.out),
                 "--model-id", "videocon/owl-con", "--out", str(pred)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(pred), "--ties", "original", "--resamples", "0"]) == 0
    printed = capsys.readouterr().out
    # src/calc_ssv2.py as the README runs it (--vid_per_caption 216)
    for line in ("mAP                                      15.51", "C@1                                      16.67",
                 "C@5                                      44.44", "C@10                                     55.56"):
        assert line in printed, printed
    res = json.loads(pred.with_suffix(".metrics.json").read_text())
    want = calc_ssv2(rows, read_scores(raw / "eval_ssv2_temporal_scores.csv"))
    assert {k: round(100 * v, 2) for k, v in want.items()} == {"mAP": 15.51, "C@1": 16.67, "C@5": 44.44, "C@10": 55.56}
    for key, value in want.items():
        assert res["metrics"][key]["value"] == pytest.approx(value)
    # ties decide a lot here: a stable sort gives other numbers, and the tie-aware ones are printed beside
    assert calc_ssv2(rows, read_scores(raw / "eval_ssv2_temporal_scores.csv"), kind="stable")["C@1"] != want["C@1"]
    aware = res["original_rule"]["tie_aware"]
    assert res["tie_rate"] == 1.0 and aware["C@10"] != pytest.approx(want["C@10"])
    # the tie-aware column of the README's reproduction table
    assert {k: round(100 * aware[k], 2) for k in want} == {"mAP": 15.57, "C@1": 16.36, "C@5": 49.57, "C@10": 65.65}
    # issue 27: the pessimistic-to-optimistic range beside the original rule's number, printed and in the JSON
    rng = res["tie_range"]["mAP"]
    assert (round(100 * rng["pessimistic"], 2), round(100 * rng["optimistic"], 2)) == (11.65, 21.87)
    assert "ties 11.65–21.87 (pessimistic–optimistic)" in printed
    assert "mAP                                      15.51      15.57       +0.06  11.65–21.87" in printed
    meta_source = res["provenance"]
    assert meta_source["ties"] == "argsort" and res["model_id"] == "videocon/owl-con"
