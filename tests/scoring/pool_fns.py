"""Module-level functions for the decoding-pool tests: worker processes import them by name."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def decode_or_die(arg):
    """The pool's decode task, except that a video named `victim*` kills its worker mid-task."""
    from hardneg.decoding import _decode_task as real  # the module's own function: the test patches only the parent

    path = arg[0]
    if Path(path).stem.startswith("victim"):
        real(arg)  # decoding done, the answer not yet sent: the worker dies in the middle of the item
        os.kill(os.getpid(), signal.SIGKILL)
    return real(arg)


def sleepy(item):
    """`item` squared; the item 'victim' announces itself in a marker file, then sleeps (to be killed)."""
    if isinstance(item, tuple):
        marker, _ = item
        Path(marker).write_text(str(os.getpid()))
        time.sleep(60)
        return "not killed"
    return item * item


def fails_on_three(item):
    if item == 3:
        raise ValueError("three is bad")
    return item + 1


def die_first_time(item):
    """`item` is (marker, value): the first call (no marker yet) writes the marker and kills its own worker, as a
    kill from outside would; the retry in a fresh worker returns value squared."""
    marker, value = item
    if not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return value * value


def decode_or_die_once(arg):
    """The pool's decode task, except that the first attempt at a video named `victim*` kills its worker (a marker
    file next to the video says it was tried)."""
    from hardneg.decoding import _decode_task as real

    path = Path(arg[0])
    marker = path.with_suffix(".tried")
    if path.stem.startswith("victim") and not marker.exists():
        marker.write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return real(arg)
