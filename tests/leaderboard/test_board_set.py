"""Issue 41 item 5, the board's traps: `submit --space` to a missing folder is refused unless `--create` (the rule of
`serve` and `show`), a submission never narrows the board's benchmark set (a 2-benchmark folder had hidden the
other benchmarks' results without a word), and `hardneg leaderboard benchmarks --set DIR`, the one explicit way
to change the declared set, says what it hides."""

from __future__ import annotations

import io
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd

from hardneg.cli import main as hardneg_main
from hardneg.leaderboard.example import predictions_bytes

FEINT = ("feint6k", "msrvtt", "test")
GENDER = ("contrast_sets", "gender", "test")


def _predictions(tmp_path: Path, item_sets, key, model: str, seed: int) -> Path:
    path = tmp_path / f"{model.replace('/', '-')}-{key[0]}-{key[1]}.parquet"
    path.write_bytes(predictions_bytes(item_sets[key], model, seed=seed))
    return path


def _shown_benchmarks(store: Path) -> set[str]:
    """The benchmarks `hardneg leaderboard show --csv -` has columns for."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert hardneg_main(["leaderboard", "show", "--data", str(store), "--csv", "-", "--resamples", "20"]) == 0
    frame = pd.read_csv(io.StringIO(out.getvalue()))
    return {c.split(":", 1)[0] for c in frame.columns if ":" in c}


def test_submit_to_a_missing_folder_is_refused_without_create(tmp_path, bench_root, item_sets, capsys):
    path = _predictions(tmp_path, item_sets, FEINT, "local/m", 1)
    typo = tmp_path / "my-bord"
    code = hardneg_main(["submit", str(path), "--space", str(typo), "--benchmarks", str(bench_root), "--no-hub-card"])
    err = capsys.readouterr().err
    assert code == 2 and not typo.exists(), err
    assert "--space" in err and "--create" in err and "no such board folder" in err
    assert hardneg_main(["submit", str(path), "--space", str(typo), "--benchmarks", str(bench_root), "--no-hub-card",
                        "--create"]) == 0
    assert "stored local/m v1" in capsys.readouterr().out
    # an existing board needs no --create
    other = _predictions(tmp_path, item_sets, GENDER, "local/m", 2)
    assert hardneg_main(["submit", str(other), "--space", str(typo), "--benchmarks", str(bench_root),
                         "--no-hub-card"]) == 0


def test_a_submission_with_fewer_benchmarks_never_narrows_the_board(tmp_path, bench_root, item_sets, capsys):
    store = tmp_path / "board"
    store.mkdir()  # an existing, empty board (no --create: these checks also run against earlier versions)
    everything = sorted({b for b, _, _ in item_sets})
    assert len(everything) >= 4
    assert hardneg_main(["submit", str(_predictions(tmp_path, item_sets, FEINT, "local/a", 1)), "--space", str(store),
                         "--benchmarks", str(bench_root), "--no-hub-card"]) == 0
    assert _shown_benchmarks(store) == set(everything)
    # a run folder's data/ holding 2 of them
    small = tmp_path / "small"
    for b in ("feint6k", "contrast_sets"):
        shutil.copytree(bench_root / b, small / b)
    assert hardneg_main(["submit", str(_predictions(tmp_path, item_sets, GENDER, "local/b", 2)), "--space", str(store),
                         "--benchmarks", str(small), "--no-hub-card"]) == 0
    capsys.readouterr()
    assert _shown_benchmarks(store) == set(everything)  # all still shown, after the narrow submission
    # `show --benchmarks` with the small folder does not narrow it either
    assert hardneg_main(["leaderboard", "show", "--data", str(store), "--benchmarks", str(small), "--resamples", "20"]) == 0
    capsys.readouterr()
    assert _shown_benchmarks(store) == set(everything)


def test_a_folder_with_new_benchmarks_adds_them(tmp_path, bench_root, item_sets, capsys):
    store = tmp_path / "board"
    store.mkdir()  # an existing, empty board (no --create: these checks also run against earlier versions)
    first = tmp_path / "first"
    shutil.copytree(bench_root / "feint6k", first / "feint6k")
    assert hardneg_main(["submit", str(_predictions(tmp_path, item_sets, FEINT, "local/a", 1)), "--space", str(store),
                         "--benchmarks", str(first), "--no-hub-card"]) == 0
    assert _shown_benchmarks(store) == {"feint6k"}
    assert hardneg_main(["submit", str(_predictions(tmp_path, item_sets, GENDER, "local/b", 2)), "--space", str(store),
                         "--benchmarks", str(bench_root), "--no-hub-card"]) == 0
    assert "contrast_sets" in capsys.readouterr().err  # the addition is said
    assert _shown_benchmarks(store) == {b for b, _, _ in item_sets}


def test_only_the_explicit_command_narrows_and_it_says_what_it_hides(tmp_path, bench_root, item_sets, capsys):
    store = tmp_path / "board"
    store.mkdir()  # an existing, empty board (no --create: these checks also run against earlier versions)
    for key, model, seed in ((FEINT, "local/a", 1), (GENDER, "local/b", 2)):
        assert hardneg_main(["submit", str(_predictions(tmp_path, item_sets, key, model, seed)), "--space", str(store),
                             "--benchmarks", str(bench_root), "--no-hub-card"]) == 0
    capsys.readouterr()
    assert hardneg_main(["leaderboard", "benchmarks", "--data", str(store)]) == 0
    listing = capsys.readouterr().out
    assert all(b in listing for b, _, _ in item_sets), listing
    small = tmp_path / "small"
    shutil.copytree(bench_root / "feint6k", small / "feint6k")
    assert hardneg_main(["leaderboard", "benchmarks", "--data", str(store), "--set", str(small)]) == 0
    said = capsys.readouterr().out
    assert "hides contrast_sets: 1 stored submission(s) no longer shown" in said, said
    assert "hides feint6k" not in said
    assert _shown_benchmarks(store) == {"feint6k"}
    # a missing board is refused here too
    assert hardneg_main(["leaderboard", "benchmarks", "--data", str(tmp_path / "nope")]) == 2
