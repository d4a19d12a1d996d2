"""The Space in real headless Chromium: a valid upload lands on the board with intervals; three bad
files (missing id, NaN, wrong schema) each show their message and leave the board unchanged."""

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


def upload(page, path, submitter="alice") -> str:
    page.get_by_role("tab", name="Submit").click()
    clear = page.locator("#upload button[aria-label=Clear]")
    if clear.count():
        clear.first.click()
    status = page.locator("#submit-status textarea")
    page.evaluate("() => { const t = document.querySelector('#submit-status textarea'); t.value = ''; }")
    page.locator("#upload input[type=file]").set_input_files(str(path))
    page.locator("#submitter textarea").fill(submitter)
    page.locator("#submit-btn").click()
    sync_api.expect(status).to_have_value(re.compile(r"^(stored|submission refused)"), timeout=TIMEOUT_MS)
    return status.input_value()


def show_board(page):
    page.get_by_role("tab", name="Feint6K (RCAD)").click()
    page.locator("#board-feint6k").wait_for(timeout=TIMEOUT_MS)


def test_upload_valid_and_invalid_files(space, item_sets, tmp_path, artifacts_dir, browser):
    url, board = space
    items = item_sets[FEINT]
    good = tmp_path / "good.parquet"
    good.write_bytes(predictions_bytes(items, "browser/model", seed=7, skill=3.0))
    missing = tmp_path / "missing.parquet"
    missing.write_bytes(predictions_bytes(items, "browser/other", scores=[np.zeros(6)] * 7, ids=items.ids[:7].tolist()))
    nan = tmp_path / "nan.parquet"
    scores = [np.ones(6, np.float32) for _ in range(len(items))]
    scores[4][1] = np.nan
    nan.write_bytes(predictions_bytes(items, "browser/other", scores=scores))
    wrong = tmp_path / "wrong.parquet"
    meta = pq.read_schema(pa.BufferReader(predictions_bytes(items, "browser/other"))).metadata
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": items.ids.tolist(), "score": [0.5] * len(items)}).replace_schema_metadata(meta), buf)
    wrong.write_bytes(buf.getvalue())

    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(url)
    page.locator("#board-feint6k").wait_for(timeout=TIMEOUT_MS)
    rows_before = board_rows(page)
    assert "browser/model" not in page.inner_text("#board-feint6k")

    message = upload(page, good)
    assert message.startswith("stored browser/model v1 on feint6k/msrvtt/test")
    show_board(page)
    sync_api.expect(page.locator("#board-feint6k")).to_contain_text("browser/model", timeout=TIMEOUT_MS)
    assert board_rows(page) == rows_before + 1
    sub = board.store.current("feint6k")[0]
    r1 = sub.results["metrics"]["R@1"]
    shown = f"{r1['estimate'] * 100:.1f} [{r1['low'] * 100:.1f}, {r1['high'] * 100:.1f}]"
    sync_api.expect(page.locator("#board-feint6k")).to_contain_text(shown)  # the score with its interval
    page.screenshot(path=str(artifacts_dir / "leaderboard_after_valid_submission.png"), full_page=True)

    stored = board.store.count()
    rows_after_good = board_rows(page)
    for path, expected in (
        (missing, "1 id of msrvtt/test missing: 'msrvtt:7'"),
        (nan, "1 item with NaN or infinite scores: 'msrvtt:4'"),
        (wrong, "missing column 'scores' (list<float32>)"),
    ):
        message = upload(page, path)
        assert message.startswith("submission refused") and expected in message, message
        page.screenshot(path=str(artifacts_dir / f"leaderboard_refused_{path.stem}.png"), full_page=False)
        show_board(page)
        assert board_rows(page) == rows_after_good
        assert "browser/other" not in page.inner_text("#board-feint6k")
    assert board.store.count() == stored
    page.close()
