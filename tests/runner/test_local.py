"""Local backend: correctness against a reference, resume, exactly-once, determinism, refusals."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import runner_fns
from hardneg.io import OutputExistsError
from hardneg.runner import ShardError, read_output, run_map
from hardneg.runner.plan import MANIFEST

from runner_fns import make_captions


def shard_files(out: Path) -> list[Path]:
    return sorted(out.glob("part-*.parquet"))


def reference(table: pa.Table) -> list[dict]:
    rows = [runner_fns.reference_row(i, t) for i, t in zip(table["id"].to_pylist(), table["text"].to_pylist())]
    return sorted(rows, key=lambda r: r["id"])


def test_output_matches_reference_and_summary_counts(captions, tmp_path):
    s = run_map(runner_fns.make_tagger, captions, tmp_path / "out", batch_size=10, progress=False)
    got = read_output(tmp_path / "out")
    assert got.to_pylist() == reference(captions)
    n_short = sum(1 for t in captions["text"].to_pylist() if len(t.split()) < 2)
    assert n_short == 6  # 53 captions, one word every 9th
    assert (s.rows_in, s.rows_out, s.skipped, s.rows_written) == (53, 53 - n_short, {"too short": n_short}, 53)
    assert (s.shards_total, s.shards_run, s.shards_resumed) == (6, 6, 0)
    assert [p.name for p in shard_files(tmp_path / "out")] == [f"part-{k:05d}-of-00006.parquet" for k in range(6)]
    # shard k holds input rows [10k, 10k+10) in input order
    shard2 = pq.read_table(tmp_path / "out" / "part-00002-of-00006.parquet")
    assert shard2["id"].to_pylist() == captions["id"].to_pylist()[20:30]
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text())
    assert manifest["complete"] and manifest["summary"]["rows_out"] == 47


def test_same_bytes_for_any_worker_count(captions, tmp_path):
    run_map(runner_fns.make_tagger, captions, tmp_path / "w1", batch_size=7, progress=False)
    s = run_map(runner_fns.make_tagger, captions, tmp_path / "w3", batch_size=7, num_workers=3, progress=False)
    assert s.shards_run == 8 and s.rows_in == 53
    one, three = shard_files(tmp_path / "w1"), shard_files(tmp_path / "w3")
    assert [p.name for p in one] == [p.name for p in three]
    for a, b in zip(one, three):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert read_output(tmp_path / "w1").equals(read_output(tmp_path / "w3"))


def test_shard_bytes_depend_on_its_rows_only(captions, tmp_path):
    """The first shards of a longer input are byte-identical to those of a shorter one (same rows):
    the input digest in each shard's metadata must not depend on where the slice was cut from."""
    run_map(runner_fns.make_tagger, captions, tmp_path / "all", batch_size=10, progress=False)
    first30 = pa.Table.from_pylist(captions.slice(0, 30).to_pylist(), schema=captions.schema)  # its own buffers
    run_map(runner_fns.make_tagger, first30, tmp_path / "first30", batch_size=10, progress=False)
    short = shard_files(tmp_path / "first30")
    assert len(short) == 3
    for k, path in enumerate(short):
        assert path.read_bytes() == (tmp_path / "all" / f"part-{k:05d}-of-00006.parquet").read_bytes(), path.name


def test_resume_after_crash_redoes_nothing(captions, tmp_path):
    out = tmp_path / "out"
    crashing = runner_fns.FailingAfter(k=3)
    with pytest.raises(ShardError, match=r"shard 3 \(input rows 24\.\.31"):
        run_map(crashing, captions, out, batch_size=8, progress=False)
    assert len(shard_files(out)) == 3
    assert json.loads((out / MANIFEST).read_text())["complete"] is False
    with pytest.raises(ValueError, match="incomplete"):
        read_output(out)
    assert len(read_output(out, allow_incomplete=True)) == 24

    rerun = runner_fns.Recording()
    s = run_map(rerun, captions, out, batch_size=8, progress=False)
    assert (s.shards_resumed, s.shards_run, s.rows_processed) == (3, 4, 53 - 24)
    # nothing redone: the rerun saw exactly the rows the crashed run had not finished
    assert rerun.seen == captions["id"].to_pylist()[24:]
    assert sorted(crashing.seen + rerun.seen) == sorted(captions["id"].to_pylist())
    # nothing twice, and the same bytes as an uninterrupted run
    run_map(runner_fns.make_tagger, captions, tmp_path / "fresh", batch_size=8, progress=False)
    for a, b in zip(shard_files(out), shard_files(tmp_path / "fresh")):
        assert a.read_bytes() == b.read_bytes()
    assert read_output(out).to_pylist() == reference(captions)


def test_rerun_of_complete_output_does_nothing(captions, tmp_path):
    run_map(runner_fns.make_tagger, captions, tmp_path / "out", batch_size=20, progress=False)
    rec = runner_fns.Recording()
    s = run_map(rec, captions, tmp_path / "out", batch_size=20, progress=False)
    assert rec.seen == [] and s.shards_resumed == 3 and s.rows_out == 47


def test_damaged_shard_is_redone(captions, tmp_path):
    out = tmp_path / "out"
    run_map(runner_fns.make_tagger, captions, out, batch_size=20, progress=False)
    good = (out / "part-00001-of-00003.parquet").read_bytes()
    (out / "part-00001-of-00003.parquet").write_bytes(b"not parquet")
    (out / ".part-00002-of-00003.parquet.x.tmp").write_bytes(b"half a write")
    rec = runner_fns.Recording()
    s = run_map(rec, captions, out, batch_size=20, progress=False)
    assert (s.shards_run, s.shards_resumed) == (1, 2)
    assert rec.seen == captions["id"].to_pylist()[20:40]
    assert (out / "part-00001-of-00003.parquet").read_bytes() == good
    assert not list(out.glob(".*.tmp"))


def test_pool_failure_keeps_finished_shards_then_resumes(captions, tmp_path):
    out = tmp_path / "out"
    bad = captions["id"][40].as_py()  # row 40: shard 4 of 6 (rows 36..44)
    with pytest.raises(ShardError, match=f"cannot handle {bad}"):
        run_map(functools.partial(runner_fns.make_failing_on, bad), captions, out, batch_size=9, num_workers=2, progress=False)
    done = {p.name for p in shard_files(out)}
    assert "part-00004-of-00006.parquet" not in done
    s = run_map(runner_fns.make_tagger, captions, out, batch_size=9, num_workers=2, progress=False)
    assert s.shards_resumed == len(done) and s.shards_run == 6 - len(done)
    assert read_output(out).to_pylist() == reference(captions)


def test_exactly_once_with_several_rows_per_input(captions, tmp_path):
    s = run_map(runner_fns.make_two_per_row, captions, tmp_path / "out", batch_size=6, num_workers=2, progress=False)
    got = read_output(tmp_path / "out")
    assert Counter(got["id"].to_pylist()) == {i: 2 for i in captions["id"].to_pylist()}
    # stable sort: the two rows of an id keep the function's order
    assert got["k"].to_pylist() == [0, 1] * 53
    assert (s.rows_out, s.rows_written, s.skipped) == (106, 106, {})


def test_missing_output_rows_are_counted(tmp_path):
    table = pa.table({"id": [1, 2, 3, 4], "x": [1, 0, 1, 0]})

    def factory():
        return lambda b: {"id": [i for i, x in zip(b["id"], b["x"]) if x]}

    s = run_map(factory, table, tmp_path / "out", batch_size=3, progress=False)
    assert s.skipped == {"no output row": 2} and s.rows_out == 2
    assert read_output(tmp_path / "out")["id"].to_pylist() == [1, 3]


def test_refuses_to_overwrite_a_different_run(captions, tmp_path):
    out = tmp_path / "out"
    run_map(runner_fns.make_tagger, captions, out, batch_size=10, progress=False)
    before = {p.name: p.read_bytes() for p in shard_files(out)}
    with pytest.raises(OutputExistsError, match="batch_size.*--overwrite"):
        run_map(runner_fns.make_tagger, captions, out, batch_size=5, progress=False)
    other = captions.set_column(1, "text", pa.array(["x y z"] * 53))
    with pytest.raises(OutputExistsError, match="input_digest"):
        run_map(runner_fns.make_tagger, other, out, batch_size=10, progress=False)
    assert {p.name: p.read_bytes() for p in shard_files(out)} == before
    s = run_map(runner_fns.make_tagger, other, out, batch_size=10, overwrite=True, progress=False)
    assert s.shards_run == 6 and set(read_output(out)["negative"].to_pylist()) <= {"x z y", "y x z", "z y x"}


def test_refuses_folder_with_foreign_files(captions, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    for overwrite in (False, True):
        with pytest.raises(OutputExistsError, match="notes.txt"):
            run_map(runner_fns.make_tagger, captions, tmp_path, overwrite=overwrite, progress=False)
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "table, match",
    [
        (pa.table({"key": ["a"], "text": ["x"]}), "no id column 'id'"),
        (pa.table({"id": ["a", "b", "a"], "text": ["x"] * 3}), r"duplicate id 'a' at rows \[0, 2\]"),
        (pa.table({"id": ["a", None], "text": ["x"] * 2}), "null at row 1"),
        (pa.table({"id": [1.5], "text": ["x"]}), "strings or integers"),
    ],
)
def test_bad_input_names_the_problem(table, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        run_map(runner_fns.make_tagger, table, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "kind, match",
    [
        ("no_id", "no id column 'id'"),
        ("foreign_id", "ids not in this batch's input"),
        ("ragged", "column lengths"),
        ("int", "returned int"),
    ],
)
def test_bad_function_output_names_the_shard(kind, match, captions, tmp_path):
    with pytest.raises(ShardError, match=f"shard 0 .*{match}|{match}"):
        run_map(lambda: runner_fns.make_bad_output(kind), captions, tmp_path / "out", progress=False)


def test_unpicklable_factory_is_explained_for_pools(captions, tmp_path):
    with pytest.raises(ValueError, match="picklable.*functools.partial"):
        run_map(lambda: runner_fns.make_tagger(), captions, tmp_path / "o", num_workers=2, progress=False)


def test_bad_arguments(captions, tmp_path):
    with pytest.raises(ValueError, match="batch_size"):
        run_map(runner_fns.make_tagger, captions, tmp_path / "o", batch_size=0)
    with pytest.raises(ValueError, match="backend"):
        run_map(runner_fns.make_tagger, captions, tmp_path / "o", backend="spark")
    with pytest.raises(ValueError, match="num_gpus"):
        run_map(runner_fns.make_tagger, captions, tmp_path / "o", num_gpus=1)
    with pytest.raises(FileNotFoundError, match="missing.parquet does not exist"):
        run_map(runner_fns.make_tagger, tmp_path / "missing.parquet", tmp_path / "o")
    (tmp_path / "in.xml").write_text("<a/>")
    with pytest.raises(ValueError, match="unknown file type"):
        run_map(runner_fns.make_tagger, tmp_path / "in.xml", tmp_path / "o")
    with pytest.raises(ValueError, match="not supported"):
        run_map(runner_fns.make_tagger, [1, 2], tmp_path / "o")


def test_every_input_kind_gives_the_same_output(tmp_path):
    table = make_captions(12)
    pq.write_table(table, tmp_path / "in.parquet")
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in table.to_pylist()))
    table.to_pandas().to_csv(tmp_path / "in.csv", index=False)
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"id": ["zz"] + table["id"].to_pylist(), "text": ["w w"] + table["text"].to_pylist()})
    ds = ds.select(range(1, 13))  # an index mapping: must be honoured
    outputs = []
    for i, source in enumerate([table, tmp_path / "in.parquet", tmp_path / "in.jsonl", str(tmp_path / "in.csv"), ds]):
        run_map(runner_fns.make_tagger, source, tmp_path / f"o{i}", batch_size=5, progress=False)
        outputs.append([p.read_bytes() for p in shard_files(tmp_path / f"o{i}")])
    assert all(o == outputs[0] for o in outputs[1:])


def test_text_file_input(tmp_path):
    (tmp_path / "caps.txt").write_text("a man runs\n\nthe dog sits down\nhi\n")
    s = run_map(runner_fns.make_tagger, tmp_path / "caps.txt", tmp_path / "o", progress=False)
    got = read_output(tmp_path / "o")
    assert got["id"].to_pylist() == ["000000", "000001", "000002"]
    assert got["n_words"].to_pylist() == [3, 4, 1] and s.skipped == {"too short": 1}


def test_local_backend_never_imports_ray(tmp_path):
    code = (
        "import sys, pyarrow as pa\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import runner_fns\n"
        "from hardneg.runner import run_map, read_output\n"
        "t = pa.table({'id': ['a', 'b', 'c'], 'text': ['x y', 'y z', 'z']})\n"
        "run_map(runner_fns.make_tagger, t, sys.argv[2], batch_size=2, num_workers=2, progress=False)\n"
        "read_output(sys.argv[2])\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    res = subprocess.run([sys.executable, "-c", code, str(Path(runner_fns.__file__).parent), str(tmp_path / "o")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_empty_input_gives_an_empty_complete_output(tmp_path):
    table = pa.table({"id": pa.array([], pa.string()), "text": pa.array([], pa.string())})
    s = run_map(runner_fns.make_tagger, table, tmp_path / "o", progress=False)
    assert (s.rows_in, s.rows_out, s.shards_total) == (0, 0, 0)
    assert read_output(tmp_path / "o").num_rows == 0


def _broken_factory():
    raise OSError("model weights not found")


def test_factory_failure_in_a_pool_worker_is_reported(captions, tmp_path):
    with pytest.raises(ShardError, match="factory .* failed in a worker: OSError: model weights not found"):
        run_map(_broken_factory, captions, tmp_path / "o", num_workers=2, progress=False)
