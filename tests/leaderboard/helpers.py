"""Small benchmark folders in the project's schemas (MC_ITEM_SCHEMA, FIRE schemas), written by the tests."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hardneg.leaderboard.identity import Identity
from hardneg.schema import MC_ITEM_SCHEMA, QREL_SCHEMA, QUERY_SCHEMA, VIDEO_SCHEMA

#: signed-in test users: alice belongs to the organizations "org" and "alice-org"; bob to none
ALICE = Identity("alice", ("org", "alice-org"))
BOB = Identity("bob")

SPACE_DIR = Path(__file__).resolve().parents[2] / "spaces" / "leaderboard"

PROV = {"origin": "human", "generator": None, "generator_version": None, "rule": None, "pos": None,
        "span": None, "replacement": None, "seed": None, "details": None}


def mc_table(prefix: str, n_items: int, n_candidates, category: str, label_of=lambda i: 0, videos_per=1) -> pa.Table:
    """n_items items; n_candidates an int or a function of the item index (ragged candidate counts)."""
    rows = []
    for i in range(n_items):
        c = n_candidates(i) if callable(n_candidates) else n_candidates
        label = label_of(i) % c
        rows.append({
            "id": f"{prefix}:{i}", "video_id": f"vid{i // videos_per}", "source_dataset": "test", "source_split": "test",
            "category": category, "captions": [f"caption {j} of item {i} {'right' if j == label else 'wrong'}" for j in range(c)],
            "label": label, "manipulated_index": None,
            "negative_types": ["positive" if j == label else category for j in range(c)],
            "provenance": [PROV] * c,
        })
    return pa.Table.from_pylist(rows, schema=MC_ITEM_SCHEMA)


def _write(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def write_benchmarks(root: Path) -> Path:
    """feint6k (2 configs), contrast_sets (2 types), posrank (2 parts of speech, ragged), vitatecs (2 aspects), fire (1 config)."""
    for config in ("msrvtt", "vatex"):
        _write(mc_table(f"{config}", 8, 6, "counterfactual", label_of=lambda i: i), root / "feint6k" / config / "test-00000-of-00001.parquet")
    for config in ("gender", "verb_lm"):
        _write(mc_table(config, 6, 5, config, label_of=lambda i: 2 * i, videos_per=2), root / "contrast_sets" / config / "test-00000-of-00001.parquet")
    for pos in ("noun", "verb"):
        _write(mc_table(f"uvo:{pos}", 5, lambda i: 4 + i % 3, pos), root / "posrank" / "vln_uvo" / f"{pos}-00000-of-00001.parquet")
    aspects = ("direction", "sequence")  # VITATECS: 2 candidates, the aspect in `category`
    vt = pa.concat_tables([mc_table(f"vt:{a}", 4, 2, a, videos_per=2) for a in aspects])
    _write(vt, root / "vitatecs" / "all" / "test-00000-of-00001.parquet")
    videos = [f"v{j}" for j in range(5)]
    queries = [{"query_id": f"q{i}", "text": f"query {i}", "video_id": videos[i], "source_dataset": "msrvtt", "source_split": "test"} for i in range(4)]
    qrels = [{"query_id": f"q{i}", "video_id": videos[i], "label": 1, "source": "original", "n_judgments": 1,
              "agreement": 1.0, "unresolved": False} for i in range(4)]
    # FIRE labels: q0 also matches v1; q2 also matches v4; q3 judged irrelevant to v0
    for q, v, lab in (("q0", "v1", 1), ("q2", "v4", 1), ("q3", "v0", 0)):
        qrels.append({"query_id": q, "video_id": v, "label": lab, "source": "fire", "n_judgments": 3,
                      "agreement": 1.0, "unresolved": False})
    _write(pa.Table.from_pylist(qrels, schema=QREL_SCHEMA), root / "fire" / "msrvtt" / "test-00000-of-00001.parquet")
    _write(pa.Table.from_pylist(queries, schema=QUERY_SCHEMA), root / "fire" / "msrvtt-queries" / "test-00000-of-00001.parquet")
    _write(pa.Table.from_pylist([{"video_id": v, "source_dataset": "msrvtt"} for v in videos], schema=VIDEO_SCHEMA),
           root / "fire" / "msrvtt-videos" / "test-00000-of-00001.parquet")
    (root / "fire" / "build_report.json").write_text(json.dumps({"benchmark": "fire"}))
    return root


def load_space_module():
    """spaces/leaderboard/app.py as a module (it is a Space, not part of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("leaderboard_space_app", SPACE_DIR / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mocked_oauth_info(username: str = "alice", orgs=("alice-org",)) -> dict:
    """What Gradio's local OAuth mock puts in the session (it asks the Hub for the local token's user; the tests
    answer offline): the signed-in user of the browser tests."""
    import time

    return {
        "access_token": f"tok-{username}", "token_type": "bearer", "expires_in": 3600, "id_token": "x",
        "scope": "openid profile", "expires_at": int(time.time()) + 3600,
        "userinfo": {"sub": "1", "name": username.title(), "preferred_username": username,
                     "profile": f"https://huggingface.co/{username}", "picture": "", "website": "",
                     "orgs": [{"preferred_username": o, "name": o.title()} for o in orgs]},
    }


#: Debian's Chromium, driven by Playwright through `executable_path` in the browser tests.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def page_load_request(url: str) -> tuple[str, dict]:
    """What a browser's page load of the board sends after GET /: the `demo.load` refresh (drawing every table),
    as (endpoint, JSON body): read from the page's /config, the inputs at their defaults (the browser sends those)."""
    import json
    import urllib.request
    import uuid

    with urllib.request.urlopen(url.rstrip("/") + "/config", timeout=60) as r:
        config = json.loads(r.read())
    values = {c["id"]: c.get("props", {}).get("value") for c in config["components"]}
    loads = [d for d in config["dependencies"] if any(t[1] == "load" for t in d["targets"])]
    dep = max(loads, key=lambda d: len(d["outputs"]))  # the refresh (the other load fills in who is signed in)
    body = {"data": [values.get(i) for i in dep["inputs"]], "fn_index": dep["id"], "session_hash": uuid.uuid4().hex,
            "trigger_id": None, "event_data": None}
    endpoint = "/gradio_api/run/predict" if dep.get("queue") is False else "/gradio_api/queue/join"
    return url.rstrip("/") + endpoint, body


def page_load(url: str, timeout: float = 120) -> dict:
    """One visitor's page load over HTTP (GET / and the board's refresh); returns the refresh's JSON answer
    (HTTPError when refused)."""
    import json
    import urllib.request

    with urllib.request.urlopen(url, timeout=timeout) as r:
        r.read()
    return draw_request(url, *page_load_request(url), timeout=timeout)


def draw_request(url: str, endpoint: str, body: dict, timeout: float = 120) -> dict:
    """Send the page load's drawing request; when it is a queued event (/queue/join, as before issue 36), follow
    the queue's event stream to its answer, as the browser does. Returns {"data": [...]} (HTTPError when
    refused, e.g. 503 "Queue is full")."""
    import json
    import urllib.request

    req = urllib.request.Request(endpoint, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        answer = json.loads(r.read())
    if not endpoint.endswith("/queue/join"):
        return answer
    stream = f"{url.rstrip('/')}/gradio_api/queue/data?session_hash={body['session_hash']}"
    with urllib.request.urlopen(stream, timeout=timeout) as r:
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("data:"):
                msg = json.loads(line[5:])
                if msg.get("msg") == "process_completed":
                    return msg.get("output") or {}
    return {}


from fakehub import FakeHub  # noqa: E402,F401 (the local stand-in for the Hub API: tests/leaderboard/fakehub.py)


#: Hub tokens of the test users, as the fake `whoami` of the Space answers them
TOKENS = {
    "tok-alice": {"type": "user", "name": "alice", "orgs": [{"name": "org"}, {"name": "alice-org"}]},
    "tok-bob": {"type": "user", "name": "bob", "orgs": []},
    "tok-carol": {"type": "user", "name": "carol", "orgs": [{"name": "org"}]},
}


def fake_whoami(token: str) -> dict:
    if token not in TOKENS:
        raise PermissionError("401 Unauthorized")
    return TOKENS[token]
