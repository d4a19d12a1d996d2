"""Paired p-values computed in the background, so that no page load waits for them.

Each p-value of a board table (a row against the leader, `board.mark_ties`) resamples every item: about 1 s
for a Feint6K-sized part (6,000 items), so a first page load that computed the top 50 took about a minute
(issue 29). A running board (`Leaderboard.start_background`, done by the Space app) keeps them in a
`BackgroundPValues`: a table drawn before a p-value is ready shows the row without it, the value is computed
by one worker thread, and `generation` moves on when it lands, which the page's refresh token includes, so
open pages redraw with it. Keys name the exact stored submissions (they never change), so a value is never
stale; the store is bounded by dropping the oldest entries.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable

log = logging.getLogger("hardneg.leaderboard")

#: most p-values kept (a value is a float: the bound is on the number of entries)
MAX_ENTRIES = 200_000


class BackgroundPValues(dict):
    """A dict of computed p-values (key -> float) plus a queue of pending ones, computed by one daemon thread."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        super().__init__()
        self.max_entries = max_entries
        self.generation = 0  # moves on each time computed values land
        self._pending: set = set()
        #: keys whose value could not be computed (the two rows hold different items, or the test failed): the
        #: table says "n/a" for them rather than "computing…" for ever
        self.unavailable: set = set()
        self._jobs: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._closed = False

    def close(self, timeout: float = 30.0) -> None:
        """Drop what is pending and stop the thread once its current computation ends (a board being shut down
        before its store is removed: issue 42, N21)."""
        with self._lock:
            self._closed = True
            self._pending.clear()
            worker = self._worker
        while True:
            try:
                self._jobs.get_nowait()
            except queue.Empty:
                break
        self._jobs.put(None)
        if worker is not None:
            worker.join(timeout)

    def schedule(self, key, fn: Callable[..., Any], *args) -> None:
        """Compute fn(*args) for `key` in the background, once (a key already pending or known is skipped)."""
        with self._lock:
            if self._closed or key in self or key in self._pending or key in self.unavailable:
                return
            self._pending.add(key)
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="hardneg-pvalues", daemon=True)
                self._worker.start()
        self._jobs.put((key, fn, args))

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending (tests, benchmarks); True when done within `timeout`."""
        import time

        end = None if timeout is None else time.monotonic() + timeout
        while self.pending():
            if end is not None and time.monotonic() > end:
                return False
            time.sleep(0.01)
        return True

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            key, fn, args = job
            try:
                value = fn(*args)
                value = None if value is None else float(value)
            except Exception:  # noqa: BLE001 (logged; the row simply shows no p-value)
                log.exception("a paired p-value could not be computed")
                value = None
            with self._lock:
                self._pending.discard(key)
                if value is None:
                    if len(self.unavailable) >= self.max_entries:
                        self.unavailable.clear()
                    self.unavailable.add(key)
                else:
                    if len(self) >= self.max_entries:
                        for old in list(self)[: self.max_entries // 10]:
                            del self[old]
                    self[key] = value
                self.generation += 1


__all__ = ["BackgroundPValues", "MAX_ENTRIES"]
