"""`hardneg submit` to a Space: an upload gets a timeout long enough for a busy Space, and a timed-out attempt is
retried with a message that says what happened (issue 42, N20: gradio_client's own 5 s read timeout failed 21 of 80
uploads under 60 page-load threads)."""

from __future__ import annotations

import httpx

from hardneg.cli.submit import _submit_remote


class FakeClient:
    made: list = []
    answers: list = []

    def __init__(self, src, **kw):
        FakeClient.made.append(kw)

    def predict(self, *args, **kw):
        answer = FakeClient.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_uploads_get_a_long_timeout_and_a_retry_that_says_what_happened(capsys):
    FakeClient.made, FakeClient.answers = [], [httpx.ReadTimeout("timed out"), "stored org/m v1"]
    out = _submit_remote([b"x"], "http://127.0.0.1:1/", "tok", {}, 2, 0.0, FakeClient, lambda p: p)
    assert out == "stored org/m v1" and len(FakeClient.made) == 2
    timeout = FakeClient.made[0].get("httpx_kwargs", {}).get("timeout")
    assert isinstance(timeout, httpx.Timeout) and timeout.read >= 60 and timeout.write >= 60
    err = capsys.readouterr().err
    assert "attempt 1 of 3" in err and "took longer than" in err and "never makes a second version" in err
