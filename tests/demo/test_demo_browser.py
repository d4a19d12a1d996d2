"""Drive the demo in real headless Chromium: pick an example, run the model, see the ranking and chart."""

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def demo_url(demo_data):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright")
    cache, data, videos = demo_data
    port = _free_port()
    env = dict(os.environ, HARDNEG_CACHE=str(cache), GRADIO_ANALYTICS_ENABLED="False")
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


def test_pick_example_run_and_see_ranking(demo_url, artifacts_dir):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1600})
        page.goto(demo_url, wait_until="networkidle")
        # pick Feint6K, then search the captions for "door" to choose the example
        page.locator("#benchmark input").click()
        page.get_by_role("option", name="feint6k").click()
        page.wait_for_function("() => document.querySelector('#example input').value.startsWith('msrvtt:')")
        page.get_by_label("Search caption text").fill("door")
        page.get_by_role("button", name="Search").click()
        page.wait_for_function("() => document.querySelector('#example input').value === 'msrvtt:video7010'")
        page.click("#run-example")
        page.wait_for_function(
            "() => (document.querySelector('#verdict') || {innerText: ''}).innerText.includes('Positive ranked')",
            timeout=120_000)
        verdict = page.inner_text("#verdict")
        assert "of 6" in verdict
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

        # a failing model call shows an error in the page, and the page keeps working
        page.locator("#model input").click()
        page.get_by_role("option", name="broken-model-for-test").click()
        page.click("#run-example")
        page.get_by_text("model broken-model-for-test failed").first.wait_for(timeout=60_000)
        page.screenshot(path=str(artifacts_dir / "demo_model_error.png"), full_page=True)
        browser.close()
