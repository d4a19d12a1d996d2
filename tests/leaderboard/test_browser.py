"""The Space in real headless Chromium: signed out, nothing is stored; after signing in (Gradio's local OAuth
mock, answered offline by the fixture) a valid upload lands on the board with intervals, a takeover of another
namespace and three bad files (missing id, NaN, wrong schema) each show their message and leave the board
unchanged."""

from __future__ import annotations

import io
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hardneg.leaderboard.example import predictions_bytes

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FEINT = ("feint6k", "msrvtt", "test")
TIMEOUT_MS = 60_000


def board_rows(page) -> int:
    """Data rows of the Feint6K board as the page shows them (the grid's aria-rowcount minus the header)."""
    return int(page.locator("#board-feint6k [role=grid]").get_attribute("aria-rowcount")) - 1


def grid(page, elem_id: str) -> list[list[str]]:
    """The cells of a table as the page shows them, header row first."""
    return page.evaluate("""id => [...document.querySelectorAll(`#${id} [role=row]`)].map(r =>
        [...r.querySelectorAll('[role=gridcell], [role=columnheader]')].map(c => c.innerText.trim()))""", elem_id)


def column(page, elem_id: str, name_start: str) -> list[str]:
    rows = grid(page, elem_id)
    j = next(k for k, h in enumerate(rows[0]) if h.startswith(name_start))
    return [r[j] for r in rows[1:]]


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
    page.locator("#board-overall").wait_for(timeout=TIMEOUT_MS)
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
    show_board(page)
    sync_api.expect(page.locator("#board-feint6k")).to_contain_text("random (exact chance)", timeout=TIMEOUT_MS)
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
        page.locator("#board-overall").wait_for(timeout=TIMEOUT_MS)
        for title in ("Feint6K (RCAD)", "Contrast sets", "PoSRank", "VITATECS", "FIRE", "Overall"):
            sync_api.expect(page.get_by_role("tab", name=title)).to_be_visible(timeout=TIMEOUT_MS)
        page.get_by_role("tab", name="VITATECS").click()
        grid = page.locator("#board-vitatecs")
        grid.wait_for(timeout=TIMEOUT_MS)
        sync_api.expect(grid).to_contain_text("Accuracy · all (%)", timeout=TIMEOUT_MS)
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


def test_board_live_overall_sort_search_drilldown_csv(space, item_sets, browser, artifacts_dir, tmp_path):
    """At 1280 px: a submission made elsewhere appears on the open page without a reload; Overall sorts (best and
    worst first) and searches; the full table scrolls sideways; the drill-down shows a failure with its video,
    positive, the negative that beat it and its provenance; the CSV download holds fractions."""
    import csv

    url, board = space
    for model, skill, seed in (("org/live-strong", 6.0, 11), ("org/live-weak", -1.0, 12)):
        for key, items in item_sets.items():
            if model.endswith("weak") and key[0] != "feint6k":
                continue  # a model with one benchmark: listed with its coverage ("1/5"), not averaged
            assert board.submit(predictions_bytes(items, model, seed=seed, skill=skill), "org").ok
    page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    try:
        page.goto(url)
        overall = page.locator("#board-overall")
        sync_api.expect(overall).to_contain_text("org/live-strong", timeout=TIMEOUT_MS)
        # a submission from elsewhere (CLI, another visitor) shows up on this open page by itself
        assert "org/live-late" not in overall.inner_text()
        items = item_sets[FEINT]
        assert board.submit(predictions_bytes(items, "org/live-late", seed=13, skill=2.0), "org").ok
        sync_api.expect(overall).to_contain_text("org/live-late", timeout=TIMEOUT_MS)
        # and a new visitor's page load is drawn from the store as it is now (not as it was at start-up)
        visitor = browser.new_page(viewport={"width": 1280, "height": 900})
        visitor.goto(url)
        sync_api.expect(visitor.locator("#board-overall")).to_contain_text("org/live-late", timeout=TIMEOUT_MS)
        visitor.close()

        models = column(page, "board-overall", "Model")
        coverage = dict(zip(models, column(page, "board-overall", "Coverage")))
        n = len(board.overall_names())
        assert coverage["org/live-strong"] == f"{n}/{n}" and coverage["org/live-weak"] == f"1/{n}"
        average = dict(zip(models, column(page, "board-overall", "Average")))
        assert average["org/live-weak"] == "" and re.fullmatch(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", average["org/live-strong"])
        values = [float(v.split()[0]) for v in column(page, "board-overall", "Average") if v]
        assert values == sorted(values, reverse=True) and models[0] == "org/live-strong"
        page.screenshot(path=str(artifacts_dir / "leaderboard_overall_1280.png"))

        # the full table is reachable: the grid scrolls sideways inside its box
        wide = page.evaluate("""() => [...document.querySelectorAll('#board-overall *')].some(e =>
            e.scrollWidth > e.clientWidth + 2 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))""")
        last = grid(page, "board-overall")[0][-1]
        assert last == "Submitted" and (wide or page.evaluate(
            "() => document.querySelector('#board-overall').scrollWidth <= 1280"))
        page.evaluate("""() => [...document.querySelectorAll('#board-overall *')].filter(e =>
            e.scrollWidth > e.clientWidth + 2 && getComputedStyle(e).overflowX === 'auto')
            .forEach(e => { e.scrollLeft = e.scrollWidth; })""")
        page.wait_for_timeout(300)
        page.screenshot(path=str(artifacts_dir / "leaderboard_overall_1280_scrolled_right.png"))
        sync_api.expect(page.get_by_text("Submitted", exact=True).first).to_be_in_viewport()
        # scrolled to the last column, each row still shows its model (the first two columns stay in view)
        box = page.locator("#board-overall").bounding_box()
        cell = page.locator("#board-overall [role=row]").nth(1).locator("[role=gridcell]").nth(1).bounding_box()
        assert box["x"] <= cell["x"] < box["x"] + 120

        # sort: worst first puts the lowest average first (models without an average stay last)
        page.locator("#overall-order").get_by_text("worst first").click()
        sync_api.expect(page.locator("#board-overall [role=row]").nth(1)).not_to_contain_text("org/live-strong",
                                                                                             timeout=TIMEOUT_MS)
        values = [float(v.split()[0]) for v in column(page, "board-overall", "Average") if v]
        assert values == sorted(values)
        page.locator("#overall-order").get_by_text("best first").click()

        # search
        page.locator("#overall-search textarea, #overall-search input").first.fill("live-w")
        sync_api.expect(page.locator("#board-overall [role=row]")).to_have_count(2, timeout=TIMEOUT_MS)
        assert column(page, "board-overall", "Model") == ["org/live-weak"]
        page.locator("#overall-search textarea, #overall-search input").first.fill("")
        sync_api.expect(overall).to_contain_text("org/live-strong", timeout=TIMEOUT_MS)

        # the CSV download: every row shown, fractions (machine output), with intervals
        with page.expect_download(timeout=TIMEOUT_MS) as dl:
            page.locator("#csv-overall").click()
        path = tmp_path / "overall.csv"
        dl.value.save_as(path)
        rows = {r["model"]: r for r in csv.DictReader(path.open(encoding="utf-8"))}
        assert {"org/live-strong", "org/live-weak", "org/live-late"} <= set(rows)
        strong = rows["org/live-strong"]
        assert 0.0 <= float(strong["average low"]) <= float(strong["average"]) <= float(strong["average high"]) <= 1.0
        assert rows["org/live-weak"]["average"] == "" and rows["org/live-weak"]["coverage"] == f"1/{n}"

        # a benchmark tab at 1280 px (screenshot), its CSV too
        page.get_by_role("tab", name="Feint6K (RCAD)").click()
        sync_api.expect(page.locator("#board-feint6k")).to_contain_text("org/live-late", timeout=TIMEOUT_MS)
        page.screenshot(path=str(artifacts_dir / "leaderboard_feint6k_1280.png"))
        with page.expect_download(timeout=TIMEOUT_MS) as dl:
            page.locator("#csv-feint6k").click()
        dl.value.save_as(tmp_path / "feint6k.csv")
        assert "org/live-weak" in (tmp_path / "feint6k.csv").read_text(encoding="utf-8")

        # the drill-down: the weak model's failures on Feint6K msrvtt
        page.get_by_role("tab", name="Details").click()
        page.locator("#drill-model input").click()
        page.get_by_role("option", name="org/live-weak", exact=True).click()
        sync_api.expect(page.locator("#drill-part input")).to_have_value("feint6k/msrvtt/test", timeout=TIMEOUT_MS)
        page.locator("#drill-btn").click()
        summary = page.locator("#drill-summary")
        sync_api.expect(summary).to_contain_text("positive caption was beaten or tied", timeout=TIMEOUT_MS)
        failures = board.failures("org/live-weak", *FEINT)
        assert failures and f"**{len(failures)}**" not in summary.inner_text()  # rendered, not raw Markdown
        sync_api.expect(summary).to_contain_text(f"Item {failures[0].item_id}")
        sync_api.expect(summary).to_contain_text(failures[0].winner)  # the negative that beat the positive
        sync_api.expect(summary).to_contain_text("origin=human")  # its provenance
        sync_api.expect(page.locator("#drill-table")).to_contain_text(failures[0].positive)
        with page.expect_download(timeout=TIMEOUT_MS) as dl:
            page.locator("#csv-failures").click()
        dl.value.save_as(tmp_path / "failures.csv")
        assert len(list(csv.DictReader((tmp_path / "failures.csv").open(encoding="utf-8")))) == len(failures)
        page.wait_for_function("() => { const v = document.querySelector('#drill-video video'); "
                               "return v && v.readyState >= 1 }", timeout=TIMEOUT_MS)
        page.screenshot(path=str(artifacts_dir / "leaderboard_drilldown_1280.png"), full_page=True)

        # per-item details of the model as Parquet
        page.locator("#details-model").click()
        link = page.locator("#details-file a").first
        link.wait_for(timeout=TIMEOUT_MS)
        with page.expect_download(timeout=TIMEOUT_MS) as dl:
            link.click()
        dl.value.save_as(tmp_path / "details.parquet")
        details = pq.read_table(tmp_path / "details.parquet")
        assert set(details.column("model_id").to_pylist()) == {"org/live-weak"}
        assert details.num_rows == len(item_sets[FEINT]) + len(item_sets[("feint6k", "vatex", "test")])
    finally:
        page.close()


def test_plots_and_about(space, item_sets, browser, artifacts_dir):
    """The Plots tab draws each model against chance and the per-negative-type view; the About tab is written from
    the declarations (every benchmark's metrics, the tie rule, chance, how to submit, identity)."""
    from hardneg import benchmarks

    url, board = space
    for key, items in item_sets.items():
        if key[0] == "contrast_sets":
            assert board.submit(predictions_bytes(items, "org/plotted", seed=21, skill=1.0), "org").ok
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    try:
        page.goto(url)
        page.locator("#board-overall").wait_for(timeout=TIMEOUT_MS)
        page.get_by_role("tab", name="Plots").click()
        page.locator("#plot-benchmark input").click()
        page.get_by_role("option", name="Contrast sets", exact=True).click()
        sync_api.expect(page.locator("#plot-types")).to_contain_text("Contrast sets: per negative type",
                                                                     timeout=TIMEOUT_MS)
        sync_api.expect(page.locator("#plot-chance")).to_contain_text("Contrast sets: each model against chance")
        for plot in ("#plot-chance", "#plot-types"):  # matplotlib figures arrive as images
            page.wait_for_function(f"() => {{ const i = document.querySelector('{plot} img'); "
                                   "return i && i.complete && i.naturalWidth > 0 }", timeout=TIMEOUT_MS)
        page.screenshot(path=str(artifacts_dir / "leaderboard_plots_1280.png"), full_page=True)
        page.get_by_role("tab", name="About").click()
        about = page.locator("#about")
        sync_api.expect(about).to_contain_text("Ties", timeout=TIMEOUT_MS)
        text = about.inner_text()
        for name in board.benchmarks:
            decl = benchmarks.get(name)
            assert decl.title in text and all(m.key in text for m in decl.metrics), name
        for needed in ("chance", "How to submit", "identity", "cover every benchmark", "bootstrap"):
            assert needed in text, needed
        page.screenshot(path=str(artifacts_dir / "leaderboard_about_1280.png"))
    finally:
        page.close()
    fig = board.negative_type_chart("contrast_sets")
    assert {t.get_text() for t in fig.axes[0].get_xticklabels()} == {"gender", "verb_lm"}
