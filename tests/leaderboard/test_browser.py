"""The Space in real headless Chromium: signed out, nothing is stored; after signing in (Gradio's local OAuth
mock, answered offline by the fixture) a valid upload lands on the board with intervals, a takeover of another
namespace and three bad files (missing id, NaN, wrong schema) each show their message and leave the board
unchanged."""

from __future__ import annotations

import io
import re
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hardneg.leaderboard.example import predictions_bytes

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FEINT = ("feint6k", "msrvtt", "test")
TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def browser():
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def board_rows(page) -> int:
    """Data rows of the Feint6K board as the page shows them (the grid's aria-rowcount minus the header)."""
    return int(page.locator("#board-feint6k [role=grid]").get_attribute("aria-rowcount")) - 1


def upload(page, path) -> str:
    page.get_by_role("tab", name="Submit").click()
    clear = page.locator("#upload button[aria-label=Clear]")
    if clear.count():
        clear.first.click()
    status = page.locator("#submit-status textarea")
    page.evaluate("() => { const t = document.querySelector('#submit-status textarea'); t.value = ''; }")
    page.locator("#upload input[type=file]").set_input_files(str(path))
    page.locator("#submit-btn").click()
    sync_api.expect(status).to_have_value(re.compile(r"^(stored|already stored|submission refused)"), timeout=TIMEOUT_MS)
    return status.input_value()


def sign_in(page):
    page.get_by_role("tab", name="Submit").click()
    with page.expect_navigation(url=re.compile(r"/(\?.*)?$"), timeout=TIMEOUT_MS):
        page.locator("#login").click()  # -> /login/huggingface -> (mocked) /login/callback -> back to the app
    page.locator("#board-feint6k").wait_for(timeout=TIMEOUT_MS)
    page.get_by_role("tab", name="Submit").click()
    sync_api.expect(page.locator("#signed-in")).to_contain_text("Signed in as alice", timeout=TIMEOUT_MS)


def show_board(page):
    page.get_by_role("tab", name="Feint6K (RCAD)").click()
    page.locator("#board-feint6k").wait_for(timeout=TIMEOUT_MS)


def test_sign_in_then_upload_valid_and_invalid_files(space, item_sets, tmp_path, artifacts_dir, browser):
    url, board = space
    items = item_sets[FEINT]
    good = tmp_path / "good.parquet"
    good.write_bytes(predictions_bytes(items, "alice/browser-model", seed=7, skill=3.0))
    takeover = tmp_path / "takeover.parquet"
    takeover.write_bytes(predictions_bytes(items, "bob/model", seed=8))
    missing = tmp_path / "missing.parquet"
    missing.write_bytes(predictions_bytes(items, "alice/other", scores=[np.zeros(6)] * 7, ids=items.ids[:7].tolist()))
    nan = tmp_path / "nan.parquet"
    scores = [np.ones(6, np.float32) for _ in range(len(items))]
    scores[4][1] = np.nan
    nan.write_bytes(predictions_bytes(items, "alice/other", scores=scores))
    wrong = tmp_path / "wrong.parquet"
    meta = pq.read_schema(pa.BufferReader(predictions_bytes(items, "alice/other"))).metadata
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": items.ids.tolist(), "score": [0.5] * len(items)}).replace_schema_metadata(meta), buf)
    wrong.write_bytes(buf.getvalue())

    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(url)
    page.locator("#board-feint6k").wait_for(timeout=TIMEOUT_MS)
    rows_before = board_rows(page)
    stored = board.store.count()

    # signed out: refused, nothing stored
    message = upload(page, good)
    assert message.startswith("submission refused") and "sign in with your Hugging Face account" in message
    assert board.store.count() == stored
    page.screenshot(path=str(artifacts_dir / "leaderboard_signed_out_refused.png"), full_page=False)

    sign_in(page)
    message = upload(page, good)
    assert message.startswith("stored alice/browser-model v1 on feint6k/msrvtt/test"), message
    show_board(page)
    sync_api.expect(page.locator("#board-feint6k")).to_contain_text("alice/browser-model", timeout=TIMEOUT_MS)
    assert board_rows(page) == rows_before + 1
    page.screenshot(path=str(artifacts_dir / "leaderboard_after_valid_submission.png"), full_page=True)

    stored = board.store.count()
    for path, expected in (
        (takeover, "model name 'bob/model' is in namespace 'bob'; you are signed in as 'alice'"),
        (missing, "1 id of msrvtt/test missing: 'msrvtt:7'"),
        (nan, "1 item with NaN or infinite scores: 'msrvtt:4'"),
        (wrong, "missing column 'scores' (list<float32>)"),
    ):
        message = upload(page, path)
        assert message.startswith("submission refused") and expected in message, message
        page.screenshot(path=str(artifacts_dir / f"leaderboard_refused_{path.stem}.png"), full_page=False)
    show_board(page)
    assert board_rows(page) == rows_before + 1
    assert "alice/other" not in page.inner_text("#board-feint6k") and "bob/model" not in page.inner_text("#board-feint6k")
    assert board.store.count() == stored
    page.close()


def test_every_declared_tab_the_overall_view_and_coverage(space, browser, artifacts_dir):
    """The tabs come from the declarations (VITATECS included), each board shows a coverage column, the papers'
    reported rows come after the ranked ones without a rank, and the Overall tab averages the models."""
    url, board = space
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(url)
        page.locator("#board-feint6k").wait_for(timeout=TIMEOUT_MS)
        for title in ("Feint6K (RCAD)", "Contrast sets", "PoSRank", "VITATECS", "FIRE", "Overall"):
            sync_api.expect(page.get_by_role("tab", name=title)).to_be_visible(timeout=TIMEOUT_MS)
        page.get_by_role("tab", name="VITATECS").click()
        grid = page.locator("#board-vitatecs")
        grid.wait_for(timeout=TIMEOUT_MS)
        sync_api.expect(grid).to_contain_text("Accuracy · all", timeout=TIMEOUT_MS)
        sync_api.expect(grid).to_contain_text("n / items")
        sync_api.expect(grid).to_contain_text("random (exact chance)")
        page.screenshot(path=str(artifacts_dir / "leaderboard_vitatecs_tab.png"))
        page.get_by_role("tab", name="Overall").click()
        sync_api.expect(page.locator("#board-overall")).to_contain_text("Average", timeout=TIMEOUT_MS)
    finally:
        page.close()
    table = board.table("feint6k")
    kinds = table["Kind"].tolist()
    first_reported = kinds.index("reported")
    assert set(kinds[first_reported:]) == {"reported"}  # reported rows apart, after every ranked row
    assert (table.loc[table["Kind"] == "reported", "#"] == "").all()
    assert "leader" not in set(table.loc[table["Kind"] == "reported", "Status"])
