"""Drive the demo in real headless Chromium: pick an example, run the model, see the ranking and chart; one
example on every benchmark of the registry (FIRE's retrieval included); a model typed by the user."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
APP = Path(__file__).resolve().parents[2] / "spaces" / "demo" / "app.py"

pytestmark = pytest.mark.browser

#: a user's Python model, typed into the model box as module:Class (scores are log-probabilities: negative)
USER_MODEL = """
import numpy as np

class LogProbModel:
    model_id = "me/logprob"
    score_name = "log-probability (test model)"
    uses_video = False

    def score(self, video, captions):
        return -np.asarray([1.0 + len(c) / 10 for c in captions])
"""


def sampled_benchmarks() -> list:
    """Every benchmark of the registry; those without a built-in sample are skipped with the reason."""
    from hardneg import benchmarks

    return [pytest.param(n, marks=() if b.sample else pytest.mark.skip(reason=f"{n} declares no built-in sample "
                                                                              "for the demo to show"))
            for n, b in benchmarks.all_benchmarks().items()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def demo_url(demo_data, tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright")
    cache, data, videos = demo_data
    port = _free_port()
    user_code = tmp_path_factory.mktemp("user-model")
    (user_code / "demo_user_model.py").write_text(USER_MODEL)
    path = os.pathsep.join(filter(None, [str(user_code), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, HARDNEG_CACHE=str(cache), GRADIO_ANALYTICS_ENABLED="False", PYTHONPATH=path)
    env.pop("SPACE_ID", None)
    proc = subprocess.Popen([sys.executable, str(APP), "--port", str(port), "--data", str(data), "--videos",
                             str(videos), "--models", "tiny-clip,broken-model-for-test"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 240
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"demo exited early:\n{proc.stdout.read().decode(errors='replace')[-3000:]}")
        try:
            urllib.request.urlopen(url, timeout=2)
            break
        except OSError:
            time.sleep(1)
    else:
        proc.kill()
        pytest.fail("demo did not start within 240 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def page(demo_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(demo_url, wait_until="networkidle")
        yield page
        browser.close()


def pick(page, field: str, option: str):
    page.locator(f"#{field} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def run_and_wait(page, button="#run-example", expect=" ranked "):
    page.evaluate("() => { const v = document.querySelector('#verdict'); if (v) v.dataset.before = v.innerText; }")
    page.click(button)
    page.wait_for_function(
        f"() => (document.querySelector('#verdict') || {{innerText: ''}}).innerText.includes({expect!r})",
        timeout=120_000)


@pytest.mark.slow
def test_pick_example_run_and_see_ranking(page, artifacts_dir):
    # pick Feint6K, then search the captions for "door" to choose the example
    pick(page, "benchmark", "Feint6K (RCAD)")
    page.wait_for_function("() => document.querySelector('#example input').value.startsWith('msrvtt:')")
    page.get_by_label("Search caption text").fill("door")
    page.get_by_role("button", name="Search").click()
    page.wait_for_function("() => document.querySelector('#example input').value === 'msrvtt:video7010'")
    # the captions box is its own output of the same event: it may fill a moment after the example's id
    page.wait_for_function("() => document.querySelector('#captions textarea').value.includes('a man is opening')")
    assert "✓ a man is opening a wooden door" in page.input_value("#captions textarea")  # the positive is marked
    run_and_wait(page)
    verdict = page.inner_text("#verdict")
    assert "of 6" in verdict and "Scores: cosine similarity" in page.inner_text("#chart")
    assert ("✓" in verdict) == ("Correct" in verdict) and ("✗" in verdict) == ("Fooled" in verdict)
    ranked = page.inner_text("#ranked")
    assert "✓ positive" in ranked and "a man is opening a wooden door" in ranked
    assert ranked.count("counterfactual") == 5  # all six candidates listed: five negatives + the positive
    assert page.locator("#chart img, #chart svg, #chart canvas").count() >= 1
    diffs = page.inner_text("#diffs")
    assert "painting" in diffs and "closing" in diffs  # negatives' changed verbs are shown
    assert "action swap" in page.inner_text("#delta-s")
    page.wait_for_function("() => { const v = document.querySelector('#video video'); return v && v.videoWidth > 0 }",
                           timeout=30_000)
    page.screenshot(path=str(artifacts_dir / "demo_feint6k_example.png"), full_page=True)

    # a failing model call shows one plain message in the page, and the page keeps working
    pick(page, "model", "broken-model-for-test")
    run_and_wait(page, expect="model broken-model-for-test failed")
    assert page.locator("#ranked").inner_text().count("counterfactual") == 0  # results cleared, not stale
    page.screenshot(path=str(artifacts_dir / "demo_model_error.png"), full_page=True)
    pick(page, "model", "tiny-clip")


def test_posrank_21_candidates_fit_and_the_positive_is_always_shown(page, artifacts_dir):
    """21 candidates: every row visible without scrolling the table, the table starting above the fold, the
    positive's rank stated and marked; the search box empties when the benchmark changes."""
    page.get_by_label("Search caption text").fill("<b>no such</b>")
    pick(page, "benchmark", "PoSRank")
    page.wait_for_function("() => document.querySelector('#example input').value.startsWith('vln_uvo:')")
    assert page.input_value("#query textarea, #query input") == ""
    assert page.inner_text("#delta-s").strip() == ""  # Feint6K's lines went with Feint6K
    run_and_wait(page)
    verdict = page.inner_text("#verdict")
    assert " ranked " in verdict and "of 21" in verdict
    assert page.locator("#ranked [role=grid]").get_attribute("aria-rowcount") == "22"  # header + 21 rows
    assert "✓ positive" in page.inner_text("#ranked")
    page.screenshot(path=str(artifacts_dir / "demo_posrank_21_candidates.png"), full_page=True)
    scrolling = page.evaluate("""() => [...document.querySelectorAll('#ranked *')].filter(
        e => e.clientHeight > 0 && getComputedStyle(e).overflowY !== 'visible' && e.scrollHeight > e.clientHeight + 2)
        .map(e => e.tagName + '.' + e.className + ' ' + e.scrollHeight + '/' + e.clientHeight)""")
    assert not scrolling, f"the ranked table scrolls ({scrolling}): a low-ranked positive could be hidden"
    top = page.locator("#ranked").bounding_box()["y"] - page.evaluate("window.scrollY")
    assert top + 200 < 900, f"the ranked table starts at {top:.0f}px: its first rows are below the fold"
    page.screenshot(path=str(artifacts_dir / "demo_posrank_21_candidates.png"), full_page=True)
    page.screenshot(path=str(artifacts_dir / "demo_posrank_21_candidates_fold.png"), full_page=False)


def test_empty_run_and_html_in_search_give_plain_messages(page, artifacts_dir):
    page.get_by_label("Search caption text").fill("<img src=x onerror=alert(1)><b>bold</b>")
    page.get_by_role("button", name="Search").click()
    toast = page.get_by_text("no caption in").first
    toast.wait_for(timeout=30_000)
    assert "<b>bold</b>" in toast.inner_text()  # shown as text, not rendered as HTML
    assert page.locator(".toast-body b, [data-testid=toast-body] b").count() == 0
    page.get_by_role("tab", name="Upload your video").click()
    run_and_wait(page, button="#run-upload", expect="upload a video first")
    assert page.locator("#video video").count() == 0  # no earlier example's video left over
    assert page.get_by_text("Error", exact=True).count() == 0  # no error badges on the outputs
    page.screenshot(path=str(artifacts_dir / "demo_empty_run.png"), full_page=False)
    page.get_by_role("tab", name="Benchmark example").click()


def test_uploads_are_capped_scored_and_deleted(demo_url, tmp_path):
    """Through the API: a file over 50 MB is refused at upload; a scored upload is deleted from the server."""
    gradio_client = pytest.importorskip("gradio_client")
    from gradio.utils import get_upload_folder

    from hardneg.video import write_synthetic_video

    c = gradio_client.Client(demo_url, verbose=False)
    big = tmp_path / "big.mp4"
    with open(big, "wb") as f:
        f.truncate(51 * 2**20)
    with pytest.raises(Exception, match="(?i)size|large|exceed"):
        c.predict(gradio_client.handle_file(str(big)), "a\nb", "tiny-clip", api_name="/run_upload")
    clip = write_synthetic_video(tmp_path / "unique-clip-4711.mp4", "x", n_frames=8)
    out = c.predict(gradio_client.handle_file(str(clip)), "a red square\na blue circle", "tiny-clip",
                    api_name="/run_upload")
    assert " ranked " in out[1] and "deleted from the server" in out[1]
    assert not list(Path(get_upload_folder()).rglob("unique-clip-4711.mp4"))


def test_picker_lists_every_declared_benchmark(page):
    """The picker is read from the declarations: every benchmark `hardneg list` names that has a sample (FIRE's
    retrieval included), by its declared title, without demo code naming any."""
    from hardneg import benchmarks

    page.locator("#benchmark input").click()
    for name, decl in benchmarks.all_benchmarks().items():
        if decl.sample:
            assert page.get_by_role("option", name=decl.title, exact=True).count() == 1, name
    page.keyboard.press("Escape")


@pytest.mark.parametrize("name", sampled_benchmarks())
def test_one_example_runs_on_every_benchmark(page, demo_data, artifacts_dir, name):
    """Pick the benchmark, run its first example: the verdict, one row per candidate (captions, or the
    collection's videos for retrieval), the chart; the benchmark's declared extra lines and no others."""
    import demo_logic as dl
    from hardneg import benchmarks

    decl = benchmarks.get(name)
    pick(page, "model", "tiny-clip")
    if page.input_value("#benchmark input") == decl.title:
        pick(page, "benchmark", next(b.title for b in benchmarks.all_benchmarks().values()
                                     if b.sample and b.name != name))
        page.wait_for_function(f"() => document.querySelector('#benchmark input').value !== {decl.title!r}")
    pick(page, "benchmark", decl.title)
    page.wait_for_function("() => document.querySelector('#verdict').innerText.trim() === ''")  # earlier result cleared
    page.wait_for_function("() => document.querySelector('#example input').value !== ''")
    store = dl.ExampleStore.load(demo_data[1])
    config = page.input_value("#config input")
    ex = store.get(name, config, page.input_value("#example input"))
    run_and_wait(page)
    verdict = page.inner_text("#verdict")
    n = len(dl.retrieval_subset(ex)[0]) if ex.is_retrieval else len(ex.captions)
    assert f"of {n}" in verdict, verdict
    assert page.locator("#ranked [role=grid]").get_attribute("aria-rowcount") == str(n + 1)
    assert "✓ positive" in page.inner_text("#ranked")
    page.wait_for_function("() => { const i = document.querySelector('#chart img'); return i && i.naturalWidth > 0 }",
                           timeout=30_000)
    if ex.is_retrieval:
        assert ex.query in verdict and ex.video_id in page.inner_text("#ranked")
        top = page.locator("#ranked [role=row]").nth(1).inner_text()
        ranked, own, relevant = dl.retrieval_subset(ex)
        extra = [ranked[j] for j in relevant if j != own]
        assert ("judged relevant" in verdict) == any(v in top for v in extra)
    assert ("Δs" in page.inner_text("#delta-s")) == ("delta_s" in decl.example_views)
    page.screenshot(path=str(artifacts_dir / f"demo_every_benchmark_{name}.png"), full_page=True)


def test_a_typed_python_model_runs_and_names_its_score(page, artifacts_dir):
    """Run locally, the model box takes module:Class: its log-probabilities (negative) are charted from zero and
    the page says what the score is."""
    pick(page, "benchmark", "Contrast sets")
    page.wait_for_function("() => document.querySelector('#example input').value !== ''")
    box = page.locator("#model input")
    box.fill("demo_user_model:LogProbModel")
    box.press("Enter")
    page.locator("#captions").click()  # leave the box: the typed value is the model
    run_and_wait(page)
    verdict = page.inner_text("#verdict")
    assert "Scores: log-probability (test model)" in page.inner_text("#chart")
    assert ("✓" in verdict) == ("Correct" in verdict)
    scores = [float(x) for x in page.inner_text("#ranked").split() if x.startswith("-")]
    assert scores and all(s < 0 for s in scores)
    page.screenshot(path=str(artifacts_dir / "demo_typed_python_model.png"), full_page=True)
    pick(page, "model", "tiny-clip")
