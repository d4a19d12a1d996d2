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
