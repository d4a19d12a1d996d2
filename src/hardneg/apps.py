"""What the two Gradio apps (spaces/demo, spaces/leaderboard) need to start anywhere: their code, a port, an upload folder.

* **Their code.** The Spaces are folders of the repository (what a Hub Space holds); the wheel ships a copy at
  `hardneg/_shipped/spaces/` (pyproject's force-include). `space_app_path` finds the checkout's first, else the
  shipped one, so `hardneg leaderboard serve` and `hardneg demo` run from a clone and from an installed wheel.
* **A port.** The board defaults to 7860 (a Space's port) and the demo to 7861, so both start side by side on one
  machine. A default port already taken is replaced by a free one, and the app says which; a port asked for
  explicitly and taken is a one-line error (never Gradio's raw `OSError: Cannot find empty port`).
* **An upload folder.** Gradio keeps uploads in GRADIO_TEMP_DIR, by default one folder shared by every Gradio app
  of the machine, and removes files there on its own schedule: a second app's clean-up then deletes the first's
  uploads mid-request (the board answered "internal error" with a FileNotFoundError). Each app process gets a
  folder of its own, under the one the user set if any, removed when the process ends.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

#: default ports: the board takes a Space's usual port, the demo the next one
BOARD_PORT = 7860
DEMO_PORT = 7861
#: the environment variable naming the process that made GRADIO_TEMP_DIR private (a child makes its own)
_OWNER = "HARDNEG_GRADIO_TEMP_OWNER"
_BASE = "HARDNEG_GRADIO_TEMP_BASE"


def space_app_path(space: str) -> Path:
    """`spaces/<space>/app.py` of this checkout, else the copy shipped in the wheel (`hardneg/_shipped/spaces/`)."""
    package = Path(__file__).resolve().parent
    candidates = [package.parents[1] / "spaces" / space / "app.py", package / "_shipped" / "spaces" / space / "app.py"]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"the {space} app is neither in a checkout ({candidates[0]}) nor shipped with the package "
                            f"({candidates[1]}); reinstall video-hardneg from the clone (pip install -e .) or from a "
                            "wheel built there (python -m pip wheel --no-deps -w dist .)")


def load_space_app(space: str, module_name: str | None = None):
    """Import a Space's app.py as a module (its folder first on sys.path, for the demo's `demo_logic`)."""
    path = space_app_path(space)
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(module_name or f"hardneg_{space}_space", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def private_upload_dir(app: str) -> Path:
    """Point GRADIO_TEMP_DIR at a folder of this process's own (made once per process; call before building Blocks).

    Made under the folder GRADIO_TEMP_DIR named before (else the system's temporary folder) and removed at exit.
    Gradio reads the variable whenever it stores or checks an upload, so one process holds one folder: every app
    built in this process shares it, and a child process (another app) makes its own.
    """
    current = os.environ.get("GRADIO_TEMP_DIR")
    if current and os.environ.get(_OWNER) == str(os.getpid()) and Path(current).is_dir():
        return Path(current)
    inherited = os.environ.get(_OWNER) and os.environ.get(_BASE)  # a parent app's private folder: not a base
    base = Path(os.environ[_BASE] if inherited else current or tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"hardneg-{app}-uploads-", dir=base))
    os.environ["GRADIO_TEMP_DIR"] = str(folder)
    os.environ[_OWNER] = str(os.getpid())
    os.environ[_BASE] = str(base)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when a server can listen on `port`. The check binds as the server will (uvicorn sets SO_REUSEADDR):
    a port whose last server was killed holds connections in TIME_WAIT for about a minute, which a plain bind
    counts as "in use", though a new server binds it at once (issue 36, N3); a listening socket still fails it."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        if os.name != "nt":  # on Windows SO_REUSEADDR would let two servers share a port: keep the plain check
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host if ":" not in host else "127.0.0.1", 0))
        return s.getsockname()[1]


class PortTaken(ValueError):
    """A port asked for explicitly is in use."""


def choose_port(requested: int | None, default: int, host: str = "127.0.0.1", what: str = "app") -> int:
    """The port to listen on: `requested` when given (PortTaken if in use), else `default`, else a free one (said)."""
    if requested is not None:
        if not port_is_free(requested, host):
            raise PortTaken(f"port {requested} on {host} is in use (another app, perhaps the demo or a board); pass "
                            f"another --port, or leave --port out to take a free one")
        return requested
    if port_is_free(default, host):
        return default
    port = free_port(host)
    print(f"{what}: port {default} is in use; using the free port {port} instead", file=sys.stderr)
    return port


__all__ = ["BOARD_PORT", "DEMO_PORT", "PortTaken", "choose_port", "free_port", "load_space_app", "port_is_free",
           "private_upload_dir", "space_app_path"]
