"""Issue 27 §11: a step that can take over a minute says how long and how much memory before it starts, and in
its --help; the README's table is the measured costs of `hardneg.expected` (no timing is asserted here)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hardneg import expected
from hardneg.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_estimate_scales_with_the_input_and_names_the_machine():
    small, big = io.StringIO(), io.StringIO()
    assert not expected.announce("world generate", 10, stream=small) and small.getvalue() == ""
    assert expected.announce("world generate", 1200, stream=big)
    text = big.getvalue()
    assert "1,200 scenes" in text and expected.MACHINE in text and "MB peak memory" in text and "busy machine" in text
    assert expected.COSTS["train"].seconds(300) > expected.COSTS["train"].seconds(10)
    assert [expected.duration(s) for s in (0.2, 59, 600, 7200)] == ["1 s", "59 s", "10 min", "2.0 h"]


@pytest.mark.parametrize("argv, step", [(["world", "generate", "--help"], "world generate"),
                                        (["score", "--help"], "score"), (["train", "--help"], "train"),
                                        (["train", "--help"], "train with negatives")])
def test_help_of_every_long_step_gives_time_and_memory(argv, step, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    text = " ".join(capsys.readouterr().out.split())
    assert "Expected time and memory" in text and f"{expected.COSTS[step].peak_mb} MB" in text
    assert " ".join(expected.help_line(step).split()) in text


def test_world_generate_announces_before_it_starts(tmp_path, monkeypatch, capsys):
    slow = expected.Cost("hardneg world generate", "scene", 100.0, 0.0, 100, "test")
    monkeypatch.setitem(expected.COSTS, "world generate", slow)
    assert main(["world", "generate", str(tmp_path / "w"), "--train", "1", "--test", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "hardneg world generate: expected: about 3 min" in err and "2 scenes" in err


def test_readme_holds_the_measured_table():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert expected.markdown_table() in readme, "README's 'Expected time and memory' table differs from hardneg.expected"
