"""`hardneg import-scores`: mismatches refused or kept (never silently), the source in the metadata,
no silent overwrite, clear errors for bad files; the formats come from the declarations."""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pyarrow.parquet as pq
import pytest

from hardneg import benchmarks
from hardneg.cli import main
from hardneg.datasets import build_benchmark
from hardneg.datasets.samples import sample_raw_dir
from hardneg.scoring import read_predictions

SSV2 = "videocon-ssv2"
SCORES = sample_raw_dir(SSV2) / "eval_ssv2_temporal_scores.csv"


@pytest.fixture
def built(tmp_path):
    return build_benchmark(SSV2, sample_raw_dir(SSV2), tmp_path / "built").out


def rows_of(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def write_rows(path, rows):
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def run(capsys, *args):
    code = main(["import-scores", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_metadata_records_the_source_and_the_file_reads_back(built, tmp_path, capsys):
    out = tmp_path / "p.parquet"
    code, printed, _ = run(capsys, SSV2, SCORES, "--data", built, "--model-id", "toy/model", "--out", out)
    assert code == 0 and "18 rows" in printed
    table, meta = read_predictions(out)
    assert table.num_rows == 3 and meta["benchmark"] == SSV2 and meta["config"] == "ssv2-temporal"
    assert meta["task"] == "retrieval" and meta["video_ids"] == ["200011", "200012", "200013", "200014", "200015", "200016"]
    src = meta["imported_from"]
    assert src["file"] == SCORES.name and src["sha256"] == hashlib.sha256(SCORES.read_bytes()).hexdigest()
    assert src["format"] == "videocon-scores-csv" and src["unmatched_rows"] == 0 and src["missing"] == 0
    assert meta["model_id"] == "toy/model" and meta["model"]["adapter"] == "imported"
    # the first query's scores, in the collection's order, as the file has them
    first = [float(r[2]) for r in rows_of(SCORES) if "left to right" in r[1]]
    assert table["scores"][0].as_py() == pytest.approx(first)


def test_no_silent_overwrite(built, tmp_path, capsys):
    out = tmp_path / "p.parquet"
    out.write_bytes(b"keep me")
    code, _, err = run(capsys, SSV2, SCORES, "--data", built, "--model-id", "toy/model", "--out", out)
    assert code == 2 and "exists" in err and out.read_bytes() == b"keep me"
    code, _, _ = run(capsys, SSV2, SCORES, "--data", built, "--model-id", "toy/model", "--out", out, "--overwrite")
    assert code == 0 and pq.read_schema(out).metadata[b"hardneg"]


def test_mismatches_are_refused_by_default_and_kept_on_request(built, tmp_path, capsys):
    rows = rows_of(SCORES)
    extra = ["videos/999999.avi", rows[0][1], "0.5", "0.5", "0.5"]  # a video the benchmark does not have
    dropped = [r for r in rows if not ("200016" in r[0] and "into" in r[1])]  # query 3 loses one video
    bad = tmp_path / "bad_scores.csv"
    write_rows(bad, dropped + [extra])
    out = tmp_path / "p.parquet"
    code, _, err = run(capsys, SSV2, bad, "--data", built, "--model-id", "toy/model", "--out", out)
    assert code == 2 and not out.exists()
    assert "1 row of the file matches no query" in err and "'999999'" in err
    assert "1 query has no complete row" in err and "ssv2-temporal-q002" in err and "--on-mismatch keep" in err
    code, printed, _ = run(capsys, SSV2, bad, "--data", built, "--model-id", "toy/model", "--out", out,
                           "--on-mismatch", "keep")
    assert code == 0 and "2 of 3 queries" in printed and "kept the matched queries" in printed
    table, meta = read_predictions(out)
    assert table["id"].to_pylist() == ["ssv2-temporal-q000", "ssv2-temporal-q001"]
    assert meta["imported_from"]["unmatched_rows"] == 1 and meta["imported_from"]["missing"] == 1
    assert meta["imported_from"]["on_mismatch"] == "keep"
    from hardneg.evaluation import evaluate_predictions

    res = evaluate_predictions(out, dataset=str(built), n_resamples=0)
    assert res["n"] == 2 and res["n_items"] == 3 and not res["comparable"]


@pytest.mark.parametrize("change,words", [
    (lambda rows: rows.insert(0, ["videopath", "caption", "entailment", "pos", "neg"]),
     ["row 1 (line 1)", "not a number", "has a header line"]),
    (lambda rows: rows.append([rows[0][0], rows[0][1], "0.11", "0", "0"]), ["scored twice"]),
    (lambda rows: rows[2].__setitem__(2, "nan"), ["column 3 (entailment) is 'nan'"]),
    (lambda rows: rows[2].__delitem__(slice(2, None)), ["2 columns"]),
])
def test_bad_score_files_are_errors_naming_the_row(built, tmp_path, capsys, change, words):
    rows = rows_of(SCORES)
    change(rows)
    bad = tmp_path / "bad_scores.csv"
    write_rows(bad, rows)
    code, _, err = run(capsys, SSV2, bad, "--data", built, "--model-id", "toy/model", "--out", tmp_path / "p.parquet")
    assert code == 2 and "bad_scores.csv" in err
    for w in words:
        assert w in err
    assert not (tmp_path / "p.parquet").exists()


def test_argument_errors(built, tmp_path, capsys):
    out = tmp_path / "p.parquet"
    code, _, err = run(capsys, SSV2, SCORES, "--data", built, "--model-id", "no-slash", "--out", out)
    assert code == 2 and "--model-id" in err and "is not a valid model name" in err
    code, _, err = run(capsys, SSV2, tmp_path / "none.csv", "--data", built, "--model-id", "a/b", "--out", out)
    assert code == 2 and "not found" in err
    other = build_benchmark("tempcompass", sample_raw_dir("tempcompass"), tmp_path / "tc").out
    code, _, err = run(capsys, SSV2, SCORES, "--data", other, "--model-id", "a/b", "--out", out)
    assert code == 2 and "holds tempcompass, not videocon-ssv2" in err
    code, _, err = run(capsys, SSV2, SCORES, "--data", built, "--model-id", "a/b", "--out", out, "--format", "x")
    assert code == 2 and "no score format 'x'" in err
    with pytest.raises(SystemExit):  # only benchmarks that declare an importer are choices
        main(["import-scores", "feint6k", str(SCORES), "--data", str(built), "--model-id", "a/b", "--out", str(out)])
    assert not out.exists()


def test_help_lists_every_declared_format(capsys):
    with pytest.raises(SystemExit):
        main(["import-scores", "--help"])
    text = capsys.readouterr().out
    declared = [(n, i.name) for n, b in benchmarks.all_benchmarks().items() for i in b.score_importers]
    assert declared and all(n in text and f in text for n, f in declared)
    assert "--on-mismatch" in text and json.dumps("refuse")[1:-1] in text
