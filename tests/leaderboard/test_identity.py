"""Issue 19 §7: sign-in is trusted only where it is real, and identical uploads at the same moment all land.

Gradio 6.31 (gradio/oauth.py `attach_oauth`, gradio/utils.py `get_space`): off a Space (SYSTEM=spaces + SPACE_ID)
`/login/huggingface` is a mock that signs the visitor in as the owner of HF_TOKEN, and sessions are signed with
sha256(OAUTH_CLIENT_SECRET + "-v4"): with no client secret, a key anyone can compute. These tests run the
production app (spaces/leaderboard/app.py, sign-in decided from the environment) on loopback and attack it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.signin import LocalModeRefused, apply_operator_oauth, sign_in_from_env

gradio_client = pytest.importorskip("gradio_client")
httpx = pytest.importorskip("httpx")
itsdangerous = pytest.importorskip("itsdangerous")

FEINT = ("feint6k", "msrvtt", "test")
PUBLIC_KEY = hashlib.sha256(b"-v4").hexdigest()  # Gradio's session key when no OAuth client secret is set


def forged_cookie(username: str, orgs=(), key: str = PUBLIC_KEY) -> str:
    """A session cookie as Starlette's SessionMiddleware writes it, naming `username` as signed in."""
    from conftest import mocked_oauth_info

    payload = base64.b64encode(json.dumps({"oauth_info": mocked_oauth_info(username, orgs)}).encode())
    return itsdangerous.TimestampSigner(key).sign(payload).decode()


def submit_with_cookie(url, path, cookie: str | None):
    headers = {"Cookie": f"session={cookie}"} if cookie else None
    c = gradio_client.Client(url, verbose=False, headers=headers)
    return c.predict(gradio_client.handle_file(str(path)), api_name="/submit")


@pytest.fixture(scope="module")
def production(tmp_path_factory, item_sets):
    """The app as its entry point builds it outside a Space: no SPACE_ID, no OAuth app, an HF_TOKEN on the
    machine (whose owner the mock would sign anyone in as); yields (url, board)."""
    import gradio.oauth

    from conftest import free_port, mocked_oauth_info
    from helpers import load_space_module

    app = load_space_module()
    board = Leaderboard(tmp_path_factory.mktemp("prod-store"), item_sets, n_resamples=50)
    with pytest.MonkeyPatch.context() as mp:
        for k in ("SPACE_ID", "SYSTEM", "OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "HARDNEG_LB_LOCAL_AS",
                  "HARDNEG_OAUTH_CLIENT_ID", "HARDNEG_OAUTH_CLIENT_SECRET"):
            mp.delenv(k, raising=False)
        mp.setenv("HF_TOKEN", "tok-operator")
        mp.setattr(gradio.oauth, "_get_mocked_oauth_info", lambda: mocked_oauth_info("operator", ()))
        mode = sign_in_from_env()
        assert mode.mode == "read-only"
        demo = app.create_app(board).queue(default_concurrency_limit=4)
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **app.launch_options(board))
        yield f"http://127.0.0.1:{port}/", board
        demo.close()


@pytest.mark.parametrize("who", [("alice", ()), ("bob", ("big-corp",)), ("operator", ())])
def test_a_forged_session_cookie_stores_nothing(production, item_sets, tmp_path, who):
    url, board = production
    name, orgs = who
    target = f"{(orgs or (name,))[0]}/model"
    path = tmp_path / "p.parquet"
    path.write_bytes(predictions_bytes(item_sets[FEINT], target, seed=4))
    msg = submit_with_cookie(url, path, forged_cookie(name, orgs))
    assert msg.startswith("submission refused") and "read-only" in msg
    assert board.store.count() == 0 and board.store.history(target) == []


def test_the_mock_login_stores_nothing(production, item_sets, tmp_path):
    url, board = production
    r = httpx.get(url + "login/huggingface", follow_redirects=False, timeout=30)
    assert r.status_code == 404  # no sign-in routes at all where sign-in would be a mock
    cookie = r.cookies.get("session")
    path = tmp_path / "evil.parquet"
    path.write_bytes(predictions_bytes(item_sets[FEINT], "operator/evil", seed=5))
    assert "read-only" in submit_with_cookie(url, path, cookie)
    # and with the operator's own Hub token handed over the API: still nothing
    c = gradio_client.Client(url, verbose=False, oauth_token="tok-operator")
    assert "read-only" in c.predict(gradio_client.handle_file(str(path)), api_name="/submit")
    assert board.store.count() == 0


def test_the_forged_cookie_is_well_formed(space, item_sets, tmp_path):
    """The control: where sessions ARE trusted (the test Space plays a Space with OAuth whose key is the public one),
    the same forgery signs in, so the refusals above come from the sign-in mode, not from a broken cookie."""
    url, board = space
    path = tmp_path / "f.parquet"
    path.write_bytes(predictions_bytes(item_sets[FEINT], "mallory/forged", seed=6))
    assert submit_with_cookie(url, path, forged_cookie("mallory")).startswith("stored mallory/forged v1")


def test_sign_in_modes_from_the_environment():
    space_oauth = {"SYSTEM": "spaces", "SPACE_ID": "org/board", "OAUTH_CLIENT_ID": "id", "OAUTH_CLIENT_SECRET": "s",
                   "OAUTH_SCOPES": "openid profile", "OPENID_PROVIDER_URL": "https://huggingface.co"}
    assert sign_in_from_env(space_oauth).mode == "oauth"
    assert sign_in_from_env({"SYSTEM": "spaces", "SPACE_ID": "org/board"}).mode == "read-only"  # no hf_oauth
    assert sign_in_from_env({"SPACE_ID": "org/board", "OAUTH_CLIENT_ID": "id"}).mode == "read-only"
    assert sign_in_from_env({}).mode == "read-only"
    local = sign_in_from_env({"HARDNEG_LB_LOCAL_AS": "erin"})
    assert local.mode == "local" and local.local.username == "erin" and local.local.local
    with pytest.raises(LocalModeRefused, match="SPACE_ID"):
        sign_in_from_env({"HARDNEG_LB_LOCAL_AS": "erin", "SPACE_ID": "org/board"})
    short = {"HARDNEG_OAUTH_CLIENT_ID": "id", "HARDNEG_OAUTH_CLIENT_SECRET": "short"}
    assert not apply_operator_oauth(dict(short)) and sign_in_from_env(short).mode == "read-only"
    operator = {"HARDNEG_OAUTH_CLIENT_ID": "id", "HARDNEG_OAUTH_CLIENT_SECRET": "x" * 40}
    assert sign_in_from_env(dict(operator)).mode == "read-only"  # not applied before Gradio: not trusted
    env = dict(operator)
    assert apply_operator_oauth(env)
    assert sign_in_from_env(env).mode == "oauth" and env["OAUTH_CLIENT_SECRET"] == "x" * 40


def test_identical_files_at_the_same_moment_all_land(space, item_sets, tmp_path):
    """8 identical files at once (Gradio keeps one shared copy): each answer is stored or already stored."""
    url, board = space
    data = predictions_bytes(item_sets[FEINT], "alice/same-moment", seed=11)
    paths = []
    for i in range(8):  # Gradio files an upload under <sha256 of content>/<file name>: same bytes and name, one copy
        (tmp_path / f"user{i}").mkdir()
        p = tmp_path / f"user{i}" / "predictions.parquet"
        p.write_bytes(data)
        paths.append(p)
    clients = [gradio_client.Client(url, verbose=False, oauth_token="tok-alice") for _ in paths]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda cp: cp[0].predict(gradio_client.handle_file(str(cp[1])), api_name="/submit"),
                                zip(clients, paths)))
    assert all(a.startswith(("stored alice/same-moment v1", "already stored alice/same-moment v1")) for a in answers), answers
    assert sum(a.startswith("stored ") for a in answers) == 1
    assert len(board.store.history("alice/same-moment")) == 1
