"""A pool of worker processes for per-item CPU work (decoding videos, writing the world's videos).

Why processes: one process's decoding threads reached about 2 cores' worth on a 16-core machine
(issue 26: the per-frame Python work holds the GIL), so the other cores sat idle. Each worker
here is a separate process with one task at a time per slot, so the pool scales with the cores.

The rules it keeps:
- results come back in input order (`imap`), so the output never depends on the worker count;
- at most `window` items are in flight or waiting to be handed back, so memory stays flat
  whatever the number of items (the caller's loop is the consumer of a bounded queue);
- an item whose function raises gives that exception back as its result (the pool goes on);
- an item whose worker dies (killed, out of memory, a crash in a C library) is run once more in a
  fresh worker (a worker killed from outside says nothing about the item: issue 36 N9, a valid video
  was called unreadable); when it dies again it gives a `WorkerDied` naming the item and the
  signal. A fresh worker takes each dead one's place, and the other items it held are handed out
  again: one bad item never kills the pool.

Workers are fresh interpreters (`python -c`, talking over a socket pair): no copy of a parent
that may hold CUDA or threads (as "fork" would make), and unlike multiprocessing's "spawn" no
re-import of the caller's main script (a script without a `__main__` guard, or code read from
standard input, would otherwise run again in every worker). They start lazily on the first
`imap` and live until `close()` (or the end of the process), so a scorer that calls `imap` once
per batch pays the start-up once.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterable, Iterator

from hardneg.threads import count_from_env, usable_cores

#: Items handed to one worker at once: the second one is ready when the first is done.
SLOTS_PER_WORKER = 2


class PoolError(RuntimeError):
    """Work given to the pool could not be done; the message says which item, why and what to do (the CLI prints
    it as an `error:` line)."""


class WorkerDied(PoolError):
    """The worker process running an item exited before it answered (a kill, a crash, out of memory), twice: in
    its first worker and in the fresh one it was retried in."""


def available_cores() -> int:
    """The cores this process may run on (its affinity mask on Linux), at least 1."""
    return usable_cores()


def default_workers() -> int:
    """`$HARDNEG_DECODE_WORKERS`, else the cores available to this process."""
    n = count_from_env("HARDNEG_DECODE_WORKERS", "processes")
    return n if n is not None else usable_cores()


def _worker_main(fd: int, preload: tuple[str, ...] = ()) -> None:
    """A worker: import `preload`, then run (key, fn, arg) tasks until told to stop (None) or the parent goes away."""
    import importlib

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    conn = Connection(fd)
    for name in preload:  # while the parent goes on: the first task does not pay for the imports
        try:
            importlib.import_module(name)
        except Exception:
            pass  # the task that needs it will say why
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        key, fn, arg = msg
        try:
            out = (key, True, fn(arg))
        except BaseException as exc:  # noqa: BLE001 - every failure is the item's result
            out = (key, False, exc)
        try:
            try:
                conn.send(out)
            except (BrokenPipeError, ConnectionError, EOFError):
                raise
            except Exception as exc:  # the result or the exception does not pickle
                conn.send((key, False, RuntimeError(f"{type(out[2]).__name__} could not be sent back: {exc}")))
        except (BrokenPipeError, ConnectionError, EOFError, OSError):
            # the parent is gone (killed: `world generate` stopped with SIGKILL): nobody to answer, nothing to say
            # (issue 42, N6: each worker printed a BrokenPipeError traceback)
            return


@dataclass
class _Worker:
    proc: Any
    conn: Any
    held: deque = field(default_factory=deque)  # keys handed to it, in the order it runs them


def _signal_name(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class WorkerPool:
    """`workers` processes running a picklable module-level function over items, results in order.

    `window`: items in flight or done but not yet handed back (default 4 per worker). Use as a
    context manager or call `close()`; `imap` may be called many times on the same workers.
    """

    def __init__(self, workers: int | None = None, window: int | None = None, name: str = "hardneg-pool",
                 preload: tuple[str, ...] = ()):
        self.workers = int(workers or default_workers())
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        self.window = int(window or 2 * SLOTS_PER_WORKER * self.workers)
        self.name = name
        self.preload = tuple(preload)  # modules the workers import as they start
        self._pool: list[_Worker] = []
        self.restarts = 0  # workers replaced after dying (for tests and reports)
        self.retried = 0  # items run again after their worker died
        self._deaths: dict[int, int] = {}

    # ------------------------------------------------------------------------------ life cycle

    def _spawn(self) -> _Worker:
        parent, child = socket.socketpair()
        fd = child.fileno()
        env = dict(os.environ)  # the worker imports what this process can (tests' helper modules too)
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).strip(os.pathsep)
        proc = subprocess.Popen([sys.executable, "-c",
                                 f"from hardneg.pool import _worker_main; _worker_main({fd}, {self.preload!r})"],
                                pass_fds=(fd,), env=env, stdin=subprocess.DEVNULL)
        child.close()
        return _Worker(proc, Connection(parent.detach()))

    def start(self) -> "WorkerPool":
        while len(self._pool) < self.workers:
            self._pool.append(self._spawn())
        return self

    def warm(self) -> "WorkerPool":
        """Start the workers and wait until each has imported its `preload` (benchmarks time the work only)."""
        self.start()
        for w in self._pool:
            w.conn.send((-1, _ping, None))
        for w in self._pool:
            w.conn.recv()
        return self

    def pids(self) -> list[int]:
        """Process ids of the workers (a test kills one)."""
        return [w.proc.pid for w in self._pool]

    def close(self) -> None:
        """Stop the workers (a second call does nothing)."""
        pool, self._pool = self._pool, []
        for w in pool:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
        for w in pool:
            try:
                w.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait(timeout=2)
            w.conn.close()

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # a pool dropped without close() does not leave processes behind
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------------------- mapping

    def imap(self, fn: Callable[[Any], Any], items: Iterable[Any], describe: Callable[[Any], str] = repr
             ) -> Iterator[Any]:
        """`fn(item)` for each item, in input order: its value, or the exception it raised, or a
        `WorkerDied` (named by `describe(item)`) when its worker process died while running it."""
        self.start()
        source = iter(items)
        args: dict[int, Any] = {}  # key -> item, for items not yet handed back
        self._deaths: dict[int, int] = {}  # key -> times its worker died while running it
        todo: deque[int] = deque()  # keys to hand out (again, after a worker died)
        done: dict[int, Any] = {}
        next_key = next_out = 0
        exhausted = False
        try:
            while True:
                while not exhausted and next_key - next_out < self.window:  # read ahead, bounded
                    try:
                        args[next_key] = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    todo.append(next_key)
                    next_key += 1
                self._hand_out(fn, args, todo, done, describe)
                while next_out in done:
                    out = done.pop(next_out)
                    del args[next_out]
                    self._deaths.pop(next_out, None)
                    next_out += 1
                    yield out
                if exhausted and next_out == next_key:
                    return
                if next_out in done or (not exhausted and next_key - next_out < self.window):
                    continue
                self._collect(args, todo, done, describe)
        except BaseException:
            # the caller stopped early (or failed): workers still hold tasks whose answers nobody will
            # read; restart the pool rather than let the next imap read stale answers
            if any(w.held for w in self._pool):
                self.close()
            raise

    def _hand_out(self, fn, args: dict, todo: deque, done: dict, describe) -> None:
        while todo:
            w = min(self._pool, key=lambda w: len(w.held))
            if len(w.held) >= SLOTS_PER_WORKER:
                return
            key = todo.popleft()
            try:
                w.conn.send((key, fn, args[key]))
            except OSError:  # it died since it last answered (BrokenPipe, reset): replace it, try again
                todo.appendleft(key)
                self._replace(w, args, todo, done, describe)
                continue
            w.held.append(key)

    def _collect(self, args: dict, todo: deque, done: dict, describe) -> None:
        """Wait for answers or deaths; record them."""
        busy = [w for w in self._pool if w.held]
        if not busy:
            return
        ready = wait([w.conn for w in busy])
        for w in busy:
            if w.conn in ready and not self._drain(w, done):  # end of file: the worker died
                self._replace(w, args, todo, done, describe)

    @staticmethod
    def _drain(w: _Worker, done: dict) -> bool:
        """Read every answer waiting; False when the worker's end is closed (it died)."""
        try:
            while w.held and w.conn.poll():
                key, ok, value = w.conn.recv()
                w.held.remove(key)
                done[key] = value
        except (EOFError, OSError):
            return False
        return True

    def _replace(self, w: _Worker, args: dict, todo: deque, done: dict, describe) -> None:
        try:
            w.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # its socket closed but it lives on: end it
            w.proc.kill()
            w.proc.wait(timeout=5)
        if w.held:  # the first item it held was the one running; the others were waiting
            key = w.held.popleft()
            deaths = self._deaths[key] = self._deaths.get(key, 0) + 1
            for k in reversed(w.held):
                todo.appendleft(k)
            if deaths == 1:  # once more, in a fresh worker: the kill may have had nothing to do with the item
                todo.appendleft(key)
                self.retried += 1
            else:
                done[key] = WorkerDied(f"{describe(args[key])}: the worker process died while working on it, twice "
                                       f"(the second time {_signal_name(w.proc.returncode)}; killed, out of memory, "
                                       "or a crash in a library); the other items went on")
        w.conn.close()
        i = self._pool.index(w)
        self._pool[i] = self._spawn()
        self.restarts += 1


def _ping(_) -> None:
    return None


_shared: dict[tuple[int, int], WorkerPool] = {}


def shared_pool(workers: int | None = None, preload: tuple[str, ...] = ()) -> WorkerPool:
    """One pool per size and thread for this process, started once and closed at exit: scorers that
    call `encode_videos` per batch reuse the same workers. Per thread, because one `imap` at a time
    may read a pool's answers (two threads scoring at once, as a web demo may, get a pool each)."""
    n = int(workers or default_workers())
    key = (n, threading.get_ident())
    pool = _shared.get(key)
    if pool is None:
        pool = _shared[key] = WorkerPool(n, name=f"hardneg-decode{n}", preload=preload)
    return pool


def close_shared(workers: int | None = None) -> None:
    """Stop this thread's shared pool of `workers` processes (all of this process's shared pools when None)."""
    for key in [k for k in _shared if workers is None or k == (int(workers), threading.get_ident())]:
        _shared.pop(key).close()


@atexit.register
def _close_shared() -> None:
    for pool in list(_shared.values()):
        pool.close()
    _shared.clear()
