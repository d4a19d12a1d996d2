"""The demo Space started against the stand-ins (tests/fetching/standins.py) with `--real tempcompass`: at start-up
it fetches the release and only its chosen examples' videos (HTTP Range reads of the Hub archive, not the whole
zip), and a real TempCompass example shows its video in the page (issue 47)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fetching"))

from standins import StandIn  # noqa: E402
from test_demo_browser import APP, ARGS, CHROMIUM, _free_port, pick  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # an app, a stand-in Hub and a browser: the slow group


def test_demo_shows_a_real_examples_video_fetched_at_start_up(realdata, tmp_path, artifacts_dir):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    from hardneg import benchmarks

    source = benchmarks.get("tempcompass").source
    folder = realdata / "tempcompass"
    ids = sorted(json.loads((folder / "caption_matching.json").read_text(encoding="utf-8")))[:6]
    with StandIn() as standin:
        standin.serve_release(source, folder)
        standin.serve_videos(source, ids, tmp_path / "clips")
        port = _free_port()
        env = dict(os.environ, HARDNEG_CACHE=str(tmp_path / "cache"), HF_HOME=str(tmp_path / "hf"),
                   GRADIO_ANALYTICS_ENABLED="False")
        env.pop("SPACE_ID", None)
        env.pop("HF_HUB_OFFLINE", None)
        proc = subprocess.Popen([sys.executable, str(APP), "--port", str(port), "--models", "tiny-clip", "--real",
                                 "tempcompass", "--real-examples", "2", "--mirror", standin.url],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/"
        try:
            for _ in range(600):
                if proc.poll() is not None:
                    pytest.fail(f"demo exited early:\n{proc.stdout.read().decode(errors='replace')[-3000:]}")
                try:
                    urllib.request.urlopen(url, timeout=2)
                    break
                except OSError:
                    time.sleep(0.5)
            archive = [r for r in standin.requests if r[1].endswith("tempcompass_videos.zip") and r[0] == "GET"]
            assert archive and all(r[2] and r[2].startswith("bytes=") for r in archive)  # Range reads only
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(url, wait_until="networkidle")
                pick(page, "benchmark", benchmarks.get("tempcompass").title)
                # until the picker's change lands, the box still holds the previous benchmark's example (seen once in
                # CI: "msrvtt:video7010"): wait for one of TempCompass's, and let the assert below say what it held
                try:
                    page.wait_for_function("ids => ids.includes(document.querySelector('#example input').value"
                                           ".split(':')[0])", arg=ids[:2], timeout=120_000)
                except PlaywrightTimeout:
                    pass
                example = page.input_value("#example input")
                assert example.split(":")[0] in ids[:2], example  # one of the real ids fetched
                # the page may still show the previous benchmark's example for a moment: wait for this one's video
                page.wait_for_function("id => { const v = document.querySelector('#video video'); "
                                       "return v && v.videoWidth > 0 && v.currentSrc.includes(id) }",
                                       arg=example.split(":")[0], timeout=120_000)
                src = page.eval_on_selector("#video video", "v => v.currentSrc")
                assert example.split(":")[0] in src
                page.screenshot(path=str(artifacts_dir / "demo_real_tempcompass_example.png"), full_page=True)
                browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
