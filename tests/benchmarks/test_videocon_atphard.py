"""VideoCon ATP-Hard: the declaration, the parser's validation, the sample, the importer and the real release."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from hardneg import benchmarks
from hardneg.benchmarks.videocon_release import PROMPT
from hardneg.cli import main
from hardneg.datasets import build_benchmark
from hardneg.datasets.raw_common import RawFormatError
from hardneg.datasets.samples import sample_raw_dir, sample_video_ids
from hardneg.evaluation import evaluate_predictions
from hardneg.items import load_items
from hardneg.results import chance_result

NAME = "videocon-atphard"
SAMPLE = sample_raw_dir(NAME)
STATEMENTS, QA = "nextqa-atphard-statements.csv", "nextqa-atphard.csv"


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_csv(path: Path, rows: list[dict]) -> None:
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def eval_atphard(statements: list[dict], qa: list[dict], scores: dict[tuple[str, str], float]) -> dict[str, float]:
    """src/eval_atphard.py main(), written again: group by (video, question), skip groups of != 5 rows,
    np.argmax over options 0..4, split by the first letter of the type (last QA row of a key wins)."""
    types = {f"{r['video']}-{r['question']}": r["type"] for r in qa}
    groups: dict[tuple[str, str], list[tuple[int, float]]] = {}
    answers = {}
    for r in statements:
        key = (r["vid_id"], r["question"])
        for j in range(5):
            groups.setdefault(key, []).append((int(r["answer"]), scores[(r["vid_id"], PROMPT.format(caption=r[f"s{j}"]))]))
        answers[key] = int(r["answer"])
    count, total, res = 0, 0, Counter()
    for key, rows in groups.items():
        if len(rows) != 5:
            continue
        right = int(np.argmax([s for _, s in rows]) == rows[0][0])
        t = types[f"{key[0]}-{key[1]}"][0]
        count += right
        total += 1
        res[f"{t}-count"] += right
        res[f"{t}-total"] += 1
    return {"Accuracy": count / total, "C": res["C-count"] / res["C-total"], "T": res["T-count"] / res["T-total"],
            "total": total}


def sample_scores() -> dict[tuple[str, str], float]:
    with open(SAMPLE / "atphard_scores.csv", newline="", encoding="utf-8") as f:
        return {(r[0].rsplit("/", 1)[1][:-4], r[1]): float(r[2]) for r in csv.reader(f)}


@pytest.fixture
def raw(tmp_path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "raw"))


# ----------------------------------------------------------------------------- declaration


def test_declared_once_with_argmax_and_the_scores_importer():
    decl = benchmarks.get(NAME)
    assert decl.task == "multiple_choice" and decl.headline == ["Accuracy"] and decl.metric("Accuracy").over is None
    assert decl.original_ties == "argmax" and "eval_atphard.py" in decl.original_ties_note
    assert decl.breakdowns == ("category",) and decl.licenses == ("mit",)
    assert "qa_distractor" in benchmarks.negative_types()
    assert decl.score_importer().name == "videocon-scores-csv"


# ----------------------------------------------------------------------------- the sample


def test_sample_builds_with_hand_checked_items(tmp_path):
    result = build_benchmark(NAME, SAMPLE, tmp_path / "out")
    assert result.report["counts"] == {"atp-hard": {"test": 5}, "causal": {"test": 3}, "temporal": {"test": 2}}
    items = load_items(str(result.out), "atp-hard")
    assert items.ids.tolist() == ["5000000001-3", "5000000001-5", "5000000002-1", "5000000003-0", "5000000003-2"]
    assert items.label.tolist() == [2, 0, 3, 1, 4]
    assert items.groups["category"].tolist() == ["causal", "temporal", "causal", "temporal", "causal"]
    assert items.captions[0][2] == "The girl put down the cup to pick up the ball."
    assert items.negative_types[0] == ["qa_distractor", "qa_distractor", "positive", "qa_distractor", "qa_distractor"]
    report = result.report
    assert report["question_asked_twice"] == {
        "5000000003: what did the cat do after jumping onto the table": ["5000000003-0", "5000000003-2"]}
    assert report["authors_eval_questions"] == 3 and report["qa_rows_without_statements"] == 1
    assert report["repeated_statements"]["questions"] == [{"answer": 3, "id": "5000000002-1", "options": [0, 2], "row": 4}]
    assert sorted(sample_video_ids(NAME)) == sorted(set(items.clusters.tolist()))
    status = {e["path"]: e["status"] for e in report["files"]}
    assert status == {STATEMENTS: "used", QA: "used", "atphard_scores.csv": "ignored", "videos.txt": "ignored"}
    assert chance_result(items, n_resamples=0).value("Accuracy") == pytest.approx(0.2)


def test_import_and_evaluate_against_eval_atphard(tmp_path, capsys):
    out = build_benchmark(NAME, SAMPLE, tmp_path / "out").out
    pred = tmp_path / "p.parquet"
    assert main(["import-scores", NAME, str(SAMPLE / "atphard_scores.csv"), "--data", str(out), "--model-id",
                 "toy/model", "--out", str(pred)]) == 0
    printed = capsys.readouterr().out
    assert "5 of 5 items" in printed and "1 rows repeated with the same score were counted once" in printed
    res = evaluate_predictions(pred, dataset=str(out), ties="original", n_resamples=0)
    # by hand: argmax right on items 1, 2, 4 (item 3's answer 3 ties with options 0 and 2, option 0 wins;
    # item 5's answer 4 ties with 0 and 2); tie-aware: 1 + 1/2 + 1/3 + 1 + 1/3 over 5
    assert res["ties"] == "argmax"
    assert res["metrics"]["Accuracy"]["value"] == pytest.approx(3 / 5)
    assert res["original_rule"]["tie_aware"]["Accuracy"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 + 1 / 3) / 5)
    assert res["breakdowns"]["category"]["causal"]["Accuracy"]["value"] == pytest.approx(1 / 3)
    assert res["breakdowns"]["category"]["temporal"]["Accuracy"]["value"] == pytest.approx(1.0)
    # the authors' script skips the question asked twice (a group of 10 rows); on the other three it agrees
    ref = eval_atphard(read_csv(SAMPLE / STATEMENTS), read_csv(SAMPLE / QA), sample_scores())
    assert ref["total"] == 3 and ref["Accuracy"] == pytest.approx(2 / 3)
    kept = [k for k in range(5) if k not in (3, 4)]
    per = np.array([1.0, 1.0, 0.0, 1.0, 0.0])
    assert per[kept].mean() == pytest.approx(ref["Accuracy"])
    # into one question type's config: the other type's rows are counted apart, not refused as mismatches
    one = tmp_path / "temporal.parquet"
    assert main(["import-scores", NAME, str(SAMPLE / "atphard_scores.csv"), "--data", str(out), "--model-id",
                 "toy/model", "--out", str(one), "--config", "temporal"]) == 0
    assert "2 of 2 items" in capsys.readouterr().out
    assert evaluate_predictions(one, dataset=str(out), ties="original", n_resamples=0)["metrics"]["Accuracy"]["value"] == 1.0


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize("file,change,words", [
    (STATEMENTS, lambda rows: rows[0].update(question="why did the boy fall"), ["is not in nextqa-atphard.csv"]),
    (STATEMENTS, lambda rows: rows[0].update(answer="5"), ["column 'answer' is 5, out of range 0..4"]),
    (STATEMENTS, lambda rows: rows[0].update(s3="  "), ["field 's3' is empty"]),
    (STATEMENTS, lambda rows: rows[0].update(vid_id="video1"), ["column 'vid_id'", "not a NExT-QA video id"]),
    (STATEMENTS, lambda rows: rows.append(dict(rows[0])), ["duplicate question", "5000000001-3"]),
    (QA, lambda rows: rows[0].update(type="DL"), ["column 'type' is 'DL'", "causal (C*) nor temporal (T*)"]),
    (QA, lambda rows: rows.append(dict(rows[1])), ["matches rows [3, 8]"]),
])
def test_malformed_rows_are_errors_naming_file_row_and_fix(raw, tmp_path, file, change, words):
    rows = read_csv(raw / file)
    change(rows)
    write_csv(raw / file, rows)
    with pytest.raises(RawFormatError) as err:
        build_benchmark(NAME, raw, tmp_path / "out")
    message = str(err.value)
    assert "row" in message and "Fix:" in message and (file in message or STATEMENTS in message)
    for w in words:
        assert w in message
    assert not (tmp_path / "out").exists()


def test_a_missing_companion_file_is_named(raw, tmp_path):
    (raw / QA).unlink()
    with pytest.raises(FileNotFoundError, match=r"found nextqa-atphard-statements.csv but not nextqa-atphard.csv"):
        build_benchmark(NAME, raw, tmp_path / "out")


# ----------------------------------------------------------------------------- the real release


@pytest.mark.realdata
def test_real_release_counts(realdata, tmp_path):
    raw = realdata / "videocon"
    result = build_benchmark(NAME, raw, tmp_path / "atp")
    assert result.report["counts"] == {"atp-hard": {"test": 1846}, "causal": {"test": 1013}, "temporal": {"test": 833}}
    assert result.report["videos"] == 553 and result.report["qa_rows_without_statements"] == 2269 - 1846
    assert result.report["per_type"] == {"CH": 322, "CW": 691, "TC": 309, "TN": 499, "TP": 25}
    assert result.report["authors_eval_questions"] == 1844  # eval_atphard.py skips the question asked twice
    statements = read_csv(raw / STATEMENTS)
    assert len(statements) == 1846
    items = load_items(str(result.out), "atp-hard")
    assert items.label.tolist() == [int(r["answer"]) for r in statements]
    assert items.captions == [[r[f"s{j}"] for j in range(5)] for r in statements]
    assert result.report["repeated_statements"]["count"] == sum(
        len({r[f"s{j}"] for j in range(5)}) < 5 for r in statements) == 7
    # a synthetic scores file in the authors' format round-trips through import-scores and agrees with
    # eval_atphard.py on every question it keeps (random scores with ties)
    rng = np.random.default_rng(0)
    scores, lines = {}, []
    for r in statements:
        for j in range(5):
            key = (r["vid_id"], PROMPT.format(caption=r[f"s{j}"]))
            scores.setdefault(key, float(rng.integers(0, 4)) / 4)
            lines.append([f"/videos/{int(r['vid_id']) % 1000}/{r['vid_id']}.mp4", key[1], scores[key], 0, 0])
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows(lines)
    (tmp_path / "synthetic_scores.csv").write_text(buf.getvalue(), encoding="utf-8")
    pred = tmp_path / "p.parquet"
    assert main(["import-scores", NAME, str(tmp_path / "synthetic_scores.csv"), "--data", str(result.out),
                 "--model-id", "test/random", "--out", str(pred)]) == 0
    res = evaluate_predictions(pred, dataset=str(result.out), ties="original", n_resamples=0)
    ref = eval_atphard(statements, read_csv(raw / QA), scores)
    assert ref["total"] == 1844
    twice = {"3562017845-0", "3562017845-1"}
    keep = np.array([i not in twice for i in items.ids.tolist()])
    from hardneg.items import subset_items
    from hardneg.results import evaluate_scores
    from hardneg.scoring import read_predictions

    table, _ = read_predictions(pred)
    by_id = dict(zip(table["id"].to_pylist(), table["scores"].to_pylist()))
    mat = np.array([by_id[i] for i in items.ids.tolist()])
    sub = evaluate_scores(subset_items(items, np.nonzero(keep)[0]), mat[keep], ties="argmax", n_resamples=0)
    assert sub.value("Accuracy") == pytest.approx(ref["Accuracy"])
    assert sub.breakdowns["category"]["causal"]["Accuracy"]["value"] == pytest.approx(ref["C"])
    assert sub.breakdowns["category"]["temporal"]["Accuracy"]["value"] == pytest.approx(ref["T"])
    assert res["n"] == 1846 and res["ties"] == "argmax"
    # issue 27: `--items authors` is the authors' item set, exactly eval_atphard.py's number, and says so
    authors = evaluate_predictions(pred, dataset=str(result.out), ties="original", n_resamples=0, items="authors")
    assert authors["n"] == authors["n_items"] == 1844 and authors["item_set"]["name"] == "authors"
    assert authors["metrics"]["Accuracy"]["value"] == pytest.approx(ref["Accuracy"])
    assert res["item_set"] == {"name": "all", "description": "every item of the release", "n_items": 1846,
                               "n_items_release": 1846}


def test_authors_item_set_is_eval_atphards_and_is_printed(tmp_path, capsys):
    """Issue 27: `evaluate --items authors` drops the question asked twice about one video (both copies), as
    src/eval_atphard.py does, and prints which item set was used; an undeclared set is a clear error."""
    out = build_benchmark(NAME, SAMPLE, tmp_path / "out").out
    pred = tmp_path / "p.parquet"
    assert main(["import-scores", NAME, str(SAMPLE / "atphard_scores.csv"), "--data", str(out), "--model-id",
                 "toy/model", "--out", str(pred)]) == 0
    capsys.readouterr()
    ref = eval_atphard(read_csv(SAMPLE / STATEMENTS), read_csv(SAMPLE / QA), sample_scores())
    assert main(["evaluate", str(pred), "--dataset", str(out), "--ties", "original", "--items", "authors",
                 "--resamples", "0", "--json", str(tmp_path / "a.json"), "--plot", str(tmp_path / "a.png")]) == 0
    printed = capsys.readouterr().out
    assert "scored 3/3" in printed and "item set: authors (3 of 5 items)" in printed and "eval_atphard.py" in printed
    res = json.loads((tmp_path / "a.json").read_text())
    assert res["item_set"]["name"] == "authors" and res["n_items"] == 3
    assert res["metrics"]["Accuracy"]["value"] == pytest.approx(ref["Accuracy"]) == pytest.approx(2 / 3)
    assert res["breakdowns"]["category"]["causal"]["Accuracy"]["value"] == pytest.approx(ref["C"])
    whole = evaluate_predictions(pred, dataset=str(out), ties="original", n_resamples=0)
    assert whole["n"] == 5 and whole["metrics"]["Accuracy"]["value"] == pytest.approx(3 / 5)
    # ties move Accuracy here (items 2, 3 and 5 tie their answer with other options; see above): every tie lost
    # leaves items 1 and 4 (2/5), every tie won all five; the range is kept in the result and printed
    low, high = whole["tie_range"]["Accuracy"]["pessimistic"], whole["tie_range"]["Accuracy"]["optimistic"]
    assert low == pytest.approx(2 / 5) and high == pytest.approx(5 / 5)
    assert main(["evaluate", str(pred), "--dataset", str(out), "--ties", "original", "--resamples", "0",
                 "--json", str(tmp_path / "b.json"), "--plot", str(tmp_path / "b.png")]) == 0
    printed = capsys.readouterr().out
    assert "ties 40.00–100.00 (pessimistic–optimistic)" in printed and "item set: all (5 items" in printed
    with pytest.raises(ValueError, match="declares no item set 'nope'"):
        evaluate_predictions(pred, dataset=str(out), items="nope")
