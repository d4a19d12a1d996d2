"""Issue 27 item 10: the board on a 1280 x 800 screen, in headless Chromium.

The Overall table shows rank, model, coverage, the average and at least four benchmark columns without any
horizontal scrolling, its first three rows without any vertical scrolling (issue 33: a compact header), each
interval on one line and no cell's text cut, and every tab (Overall, each benchmark, Plots, Details, Submit,
History, About, Admin) is in view as a tab of its own, none behind Gradio's overflow menu.
"""

from __future__ import annotations


import pytest

from hardneg import benchmarks as registry
from hardneg.leaderboard.board import GENERATIVE_MARK
from hardneg.leaderboard.example import predictions_bytes

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT_MS = 60_000
WIDTH, HEIGHT = 1280, 800
FIXED_TABS = ("Overall", "Plots", "Details", "Submit", "History & model card", "About", "Admin")


def _header_boxes(page, elem_id: str) -> list[dict]:
    """Each header cell of a table: its text and where it is on the screen."""
    return page.evaluate("""id => [...document.querySelectorAll(`#${id} [role=columnheader]`)].map(c => {
        const r = c.getBoundingClientRect();
        return {text: c.innerText.trim(), left: r.left, right: r.right, width: r.width};
    })""", elem_id)


@pytest.fixture(scope="module")
def full_space(tmp_path_factory):
    """The Space app on a board of every built-in sample (all declared benchmarks: the most tabs and columns)."""
    from helpers import free_port, load_space_module

    from hardneg.datasets import build_samples
    from hardneg.leaderboard import Leaderboard
    from hardneg.leaderboard.signin import SignIn

    root = tmp_path_factory.mktemp("all-samples")
    build_samples(root, overwrite=True)
    board = Leaderboard(tmp_path_factory.mktemp("full-store"), benchmarks_dir=root, n_resamples=50,
                        compute_blind=False)
    app = load_space_module()
    demo = app.create_app(board, refresh_s=1.0, sign_in=SignIn("read-only", "tests")).queue()
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **app.launch_options(board))
    yield f"http://127.0.0.1:{port}/", board
    demo.close()


@pytest.mark.parametrize("which", ["space", "full_space"])
def test_overall_and_tabs_fit_1280(which, request, browser, artifacts_dir):
    url, board = request.getfixturevalue(which)
    for key, items in board.item_sets.items():
        assert board.submit(predictions_bytes(items, "org/wide-check", seed=3, skill=2.0), "org").ok
        # a second model, a video LLM by its stored type: three rows at least (with the random baseline)
        assert board.submit(predictions_bytes(items, "org/wide-vlm", seed=4, skill=1.0), "org",
                            {"model_type": "generative"}).ok
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page.goto(url)
        overall = page.locator("#board-overall")
        sync_api.expect(overall).to_contain_text("org/wide-check", timeout=TIMEOUT_MS)
        page.screenshot(path=str(artifacts_dir / f"leaderboard_overall_1280x800_{which}.png"))

        # nothing scrolled sideways, and yet these headers are whole on the screen
        scrolled = page.evaluate("""() => [...document.querySelectorAll('#board-overall *')]
            .some(e => e.scrollLeft > 0) || window.scrollX > 0""")
        assert not scrolled
        heads = _header_boxes(page, "board-overall")
        box = overall.bounding_box()
        right_edge = min(WIDTH, box["x"] + box["width"])
        visible = [h["text"] for h in heads if h["width"] > 0 and h["left"] >= box["x"] - 1 and h["right"] <= right_edge + 1]
        for name in ("#", "Model", "Coverage"):
            assert name in visible, (name, visible)
        assert any(t.startswith("Average") for t in visible), visible
        titles = [registry.get(b).title for b in board.overall_names()]
        shown_benchmarks = [t for t in visible if any(t.startswith(f"{title} ·") for title in titles)]
        assert len(shown_benchmarks) >= min(4, len(titles)), (shown_benchmarks, visible)

        # issue 33: the first three rows are on the first screen, no scrolling: the header is compact
        assert page.evaluate("() => window.scrollY") == 0
        rows = page.evaluate("""() => [...document.querySelectorAll('#board-overall [role=row]')].slice(1, 4).map(r => {
            const b = r.getBoundingClientRect();
            return {top: b.top, bottom: b.bottom, height: b.height, text: r.innerText};
        })""")
        assert len(rows) == 3, rows
        for row in rows:
            assert 0 <= row["top"] and row["bottom"] <= HEIGHT, (row, "a row below the fold at 1280 x 800")
        # intervals on one line ("12.3 [10.1, 14.5]" never split), and no cell's text cut inside its column
        cells = page.evaluate("""() => [...document.querySelectorAll('#board-overall [role=gridcell]')].map(c => {
            const lines = new Set([...c.querySelectorAll('*')].concat([c]).flatMap(e => [...e.childNodes])
                .filter(n => n.nodeType === 3 && n.textContent.trim()).flatMap(n => {
                    const range = document.createRange(); range.selectNodeContents(n);
                    return [...range.getClientRects()].map(r => Math.round(r.top));
                }));
            const clipped = [c, ...c.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1);
            return {text: c.innerText.trim(), lines: lines.size, clipped};
        })""")
        intervals = [c for c in cells if "[" in c["text"]]
        assert intervals and all(c["lines"] == 1 for c in intervals), [c for c in intervals if c["lines"] != 1][:5]
        assert not [c for c in cells if c["clipped"]], [c for c in cells if c["clipped"]][:5]
        # the model's type sits beside its name (never the cell cut at a wide screen's right edge)
        assert [h["text"] for h in heads][:3] == ["#", "Model", "Type"], heads[:4]

        # the generative model is marked beside its name, here and on a benchmark's tab
        assert f"org/wide-vlm {GENERATIVE_MARK}" in overall.inner_text()
        assert f"org/wide-check {GENERATIVE_MARK}" not in overall.inner_text()
        first = board.benchmarks[0]
        page.get_by_role("tab", name=registry.get(first).title).click()
        sync_api.expect(page.locator(f"#board-{first}")).to_contain_text(f"org/wide-vlm {GENERATIVE_MARK}",
                                                                         timeout=TIMEOUT_MS)
        page.get_by_role("tab", name="Overall").click()

        # every tab is a visible tab button inside the screen; Gradio's overflow menu holds none
        tabs = page.evaluate("""() => [...document.querySelectorAll('[role=tab]')].map(b => {
            const r = b.getBoundingClientRect();
            return {text: b.innerText.trim(), left: r.left, right: r.right, width: r.width, height: r.height,
                    shown: getComputedStyle(b).visibility !== 'hidden' && getComputedStyle(b).display !== 'none'};
        })""")
        on_screen = {t["text"] for t in tabs if t["shown"] and t["width"] > 0 and t["height"] > 0
                     and t["left"] >= 0 and t["right"] <= WIDTH + 1}
        wanted = [*FIXED_TABS, *(registry.get(b).title for b in board.benchmarks)]
        missing = [t for t in wanted if t not in on_screen]
        assert not missing, (missing, sorted(on_screen))
        menu = page.evaluate("""() => [...document.querySelectorAll('.overflow-menu')].filter(m =>
            !m.classList.contains('hide') && m.getBoundingClientRect().width > 0).length""")
        assert menu == 0
        page.screenshot(path=str(artifacts_dir / f"leaderboard_tabs_1280x800_{which}.png"))
    finally:
        page.close()
