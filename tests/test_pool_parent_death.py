"""Worker processes exit quietly when their parent dies (issue 42, N6: killing `world generate`'s main process made
each of its workers print a BrokenPipeError traceback as it tried to send its result back)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

TASK = textwrap.dedent("""
    import time

    def slow(x):
        time.sleep(0.4)
        return bytes(1000) * 100
""")

PARENT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {folder!r})
    from hardneg.pool import WorkerPool
    import slowtask
    with WorkerPool(2) as pool:
        for k, _ in enumerate(pool.imap(slowtask.slow, range(40))):
            if k == 1:
                print("working", flush=True)
""")


def test_workers_exit_quietly_when_the_parent_is_killed(tmp_path):
    (tmp_path / "slowtask.py").write_text(TASK)
    parent = subprocess.Popen([sys.executable, "-c", PARENT.format(folder=str(tmp_path))], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert parent.stdout.readline().strip() == "working"
    parent.send_signal(signal.SIGKILL)  # the workers are busy: each will try to send a result to nobody
    parent.wait()
    deadline = time.time() + 60
    err = ""
    # the workers inherited the parent's stderr: it reaches EOF once every worker has exited
    while time.time() < deadline:
        chunk = parent.stderr.read()
        err += chunk
        if chunk == "":
            break
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
