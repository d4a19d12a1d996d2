"""N3 (issue 36): a restarted server takes its port back at once. A killed server leaves its connections in
TIME_WAIT / FIN_WAIT for about a minute; uvicorn (and Gradio's own port check) bind with SO_REUSEADDR, so only the
board's port check refused the port (64-69 s of "in use"). The check now binds as the server does."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import pytest

from hardneg.apps import choose_port, port_is_free

#: a server as uvicorn binds one (SO_REUSEADDR), answering each connection and keeping it open
SERVER = """
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.recv(100)
    c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok")
    time.sleep(3600)
"""


def start(port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "listening"
    return proc


def plain_bind_fails(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def test_a_killed_servers_port_is_free_again_at_once():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = start(port)
    try:
        assert not port_is_free(port)  # a listening server: in use
        client = socket.create_connection(("127.0.0.1", port), timeout=10)
        client.sendall(b"GET / HTTP/1.1\r\n\r\n")
        assert client.recv(100).endswith(b"ok")
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        client.close()  # the server's side of the connection now waits in TIME_WAIT
        assert plain_bind_fails(port)  # the control: what the old check did (refused for about a minute)
        assert port_is_free(port) and choose_port(port, 7860) == port
        server = start(port)  # and the restarted server binds it
        with socket.create_connection(("127.0.0.1", port), timeout=10) as again:
            again.sendall(b"GET / HTTP/1.1\r\n\r\n")
            assert again.recv(100).endswith(b"ok")
    finally:
        server.kill()
        server.wait(timeout=10)


@pytest.mark.slow
def test_leaderboard_serve_restarts_on_its_port(tmp_path, bench_root):
    """`hardneg leaderboard serve --port P`, SIGKILLed while a visitor's connection is open, started again with
    the same --port: it serves at once (the figure in docs/leaderboard-reliability.md comes from this test, -s)."""
    import http.client

    from test_local_apps import _env, _start, _wait_for_url

    env = _env(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["leaderboard", "serve", "--data", str(tmp_path / "lb"), "--benchmarks", str(bench_root),
            "--port", str(port), "--resamples", "50", "--create"]
    first = _start(args, tmp_path / "first.log", env)
    second = None
    try:
        url = _wait_for_url(first, tmp_path / "first.log")
        visitor = http.client.HTTPConnection("127.0.0.1", port, timeout=30)  # keep-alive: the connection stays
        visitor.request("GET", "/")
        assert visitor.getresponse().read()
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        visitor.close()
        killed = time.monotonic()
        assert plain_bind_fails(port)  # the control: the old check refused the port here
        second = _start(args, tmp_path / "second.log", env)
        assert _wait_for_url(second, tmp_path / "second.log") == url
        log = (tmp_path / "second.log").read_text()
        assert "in use" not in log
        print(f"\nrestarted on port {port}: serving {time.monotonic() - killed:.1f} s after the kill")
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
