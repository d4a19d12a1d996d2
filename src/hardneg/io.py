"""Atomic, never-silently-overwriting file output shared by every writer in the package.

A crash mid-write must leave either the old file or the new one, never half of
one; an existing result is replaced only when the caller says so.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import re
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq


class OutputExistsError(FileExistsError):
    """Raised instead of overwriting an existing result."""


#: the path that means standard output wherever a command asks for a file to write
STDOUT = "-"


def is_stdout(path) -> bool:
    """True for `-`, which every command reads as "write to standard output"."""
    return path is not None and str(path) == STDOUT


def write_stdout(data: bytes | str) -> None:
    """Write a whole output to standard output (bytes as they are: a PNG or Parquet can be piped)."""
    import sys

    sys.stdout.flush()
    if isinstance(data, str):
        data = data.encode("utf-8")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def refuse_overwrite(path: str | os.PathLike, overwrite: bool, flag: str = "--overwrite") -> None:
    """Raise OutputExistsError when `path` exists and overwriting was not asked for."""
    p = Path(path)
    if p.exists() and not overwrite:
        raise OutputExistsError(f"{p} already exists; pass {flag} to replace it, or choose another path")


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _new_temp(p: Path) -> tuple[int, str]:
    """A new temporary file next to `p`, created with mode 0666 so the umask applies (not mkstemp's 0600)."""
    p.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(100):  # a random name, retried on the (unlikely) collision, as mkstemp does
        tmp = str(p.parent / f".{p.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name next to {p}")  # pragma: no cover - 100 collisions


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to `path` via a temporary file in the same folder and an atomic rename.

    The file gets the mode a plain `open(path, "wb")` would give (0666 less the umask, e.g. 0644),
    not mkstemp's 0600: the temporary file is created with mode 0666 and the kernel applies the
    umask (no process-wide umask read, so it is safe with threads).
    """
    p = Path(path)
    fd, tmp = _new_temp(p)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(p.parent)
    return p


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_parquet(table: pa.Table, path: str | os.PathLike, **kwargs) -> Path:
    """Write a Parquet file atomically (deterministic: no created-by timestamps differ)."""
    p = Path(path)
    fd, tmp = _new_temp(p)  # pyarrow rewrites the file in place, so it keeps this mode (0666 less the umask)
    os.close(fd)
    try:
        pq.write_table(table, tmp, **kwargs)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(p.parent)
    return p


#: RENAME_EXCHANGE flag of Linux renameat2(2): swap two paths in one atomic step.
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc = None


def _rename_exchange(a: Path, b: Path) -> bool:
    """Swap `a` and `b` atomically with renameat2(RENAME_EXCHANGE); False where the OS or filesystem lacks it."""
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    if _libc is None:
        try:
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _libc = False
    fn = getattr(_libc, "renameat2", None) if _libc else None
    if fn is None:
        return False
    import ctypes

    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV):
        return False  # kernel, libc or filesystem without RENAME_EXCHANGE: use the two-step move
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def _crash_point(name: str) -> None:
    """Test hook: called at the points where a kill used to leave no output (a test replaces it)."""


def aside_path(out: str | os.PathLike) -> Path:
    """Where `atomic_directory` keeps the old tree during a two-step replace: `.<name>.aside` beside it."""
    out = Path(out)
    return out.parent / f".{out.name}.aside"


def recover_interrupted_replace(out: str | os.PathLike) -> str | None:
    """Undo a replace of `out` that a kill interrupted; call before anything else looks at `out`.

    Temporary folders of killed builds (this host, process gone) are deleted first. A leftover
    `.<name>.aside` folder with `out` missing is the old tree, moved aside just before the
    kill: it is moved back. With `out` present, the new tree was already in place
    and the aside folder is only the old tree waiting to be deleted: it is deleted.
    Returns "restored", "cleaned" or None (nothing to do).
    """
    out = Path(out)
    _remove_dead_temporaries(out)
    aside = aside_path(out)
    if not (aside.exists() or aside.is_symlink()):
        return None
    if not (out.exists() or out.is_symlink()):
        os.replace(aside, out)
        _fsync_dir(out.parent)
        return "restored"
    _remove_tree(aside)
    return "cleaned"


def _temp_prefix(out: Path, pid: int | None = None) -> str:
    """`.<name>.<host>-<pid>.`: whose temporary folder it is, so a dead process's can be found and removed."""
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"
    return f".{out.name}.{host}-{os.getpid() if pid is None else pid}."


def _remove_dead_temporaries(out: Path) -> None:
    """Delete temporary build folders of `out` left by processes of this host that no longer run (killed builds)."""
    if os.name != "posix" or not out.parent.is_dir():
        return  # (on Windows os.kill(pid, 0) would terminate the process, not probe it)
    mine = _temp_prefix(out, 0)[: -len("0.")]
    for path in out.parent.glob(f"{glob.escape(mine)}*.tmp"):
        pid_text = path.name[len(mine) :].split(".", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            _remove_tree(path)
        except OSError:
            pass  # alive (or not ours to signal): leave it


def _remove_tree(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _move_into_place(tmp: Path, out: Path) -> None:
    """Put the finished `tmp` at `out`; at no instant is `out` missing when it existed before."""
    if not (out.exists() or out.is_symlink()):
        os.replace(tmp, out)
        return
    if _rename_exchange(tmp, out):
        # one atomic step: `out` is the new tree, `tmp` the old one
        _crash_point("exchanged")
        _remove_tree(tmp)
        return
    # Two steps where the swap is not available; a kill between them leaves `out` missing and
    # the old tree at `.<name>.aside`, which the next `atomic_directory(out)` (or
    # `recover_interrupted_replace`) moves back before doing anything else.
    aside = aside_path(out)
    os.replace(out, aside)
    _crash_point("aside")
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(aside, out)
        raise
    _remove_tree(aside)


@contextlib.contextmanager
def atomic_directory(out: str | os.PathLike, overwrite: bool = False) -> Iterator[Path]:
    """Build a whole output folder in a sibling temporary folder, then move it into place.

    A failure inside the block leaves no trace of the new output and the old one untouched.
    With `overwrite`, the old folder is swapped for the new one in one atomic step on Linux
    (renameat2 RENAME_EXCHANGE); elsewhere it is moved aside first, and a kill between the
    two moves is undone at the start of the next call (see `recover_interrupted_replace`).
    """
    out = Path(out)
    recover_interrupted_replace(out)
    refuse_overwrite(out, overwrite)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(out), suffix=".tmp", dir=out.parent))
    try:
        yield tmp
        _move_into_place(tmp, out)
        _fsync_dir(out.parent)
    except BaseException:
        if tmp.exists():
            _remove_tree(tmp)
        raise
