"""The `hardneg` entry point: help lists every subcommand and each subcommand has --help."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hardneg.cli import COMMANDS, main


def test_top_level_help_lists_all_commands(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_subcommand_has_help(name):
    proc = subprocess.run([sys.executable, "-m", "hardneg", name, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "usage: hardneg " + name in proc.stdout
    assert len(proc.stdout.splitlines()) > 3  # more than a bare usage line
