"""The metric Spaces' widget: it opens with the card's example, and an empty form gives one plain message."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from hardneg.metric_modules import load_metric, metric_path
from hardneg.metric_widget import WidgetInputError, card_example, compute_from_table

METRICS = ["rcad_accuracy", "mean_rank", "posrank", "correct_at_k", "mean_average_precision"]
CHROMIUM = "/usr/bin/chromium"


@pytest.mark.parametrize("name", METRICS)
def test_the_card_example_fills_the_form_and_computes(name):
    module = load_metric(name)
    names = list(module.features.keys())
    rows, options = card_example(f"{metric_path(name)}/README.md", names)
    assert len(rows) >= 3 and all(len(r) == len(names) for r in rows)
    out = compute_from_table(module, pd.DataFrame(rows, columns=names), '{"n_resamples": 0}')
    assert out["n"] == len(rows)
    if name == "correct_at_k":
        assert options == {"ks": [1, 2]}


def test_empty_or_incomplete_forms_give_a_plain_message():
    module = load_metric("rcad_accuracy")
    names = list(module.features.keys())
    width = len(names)  # predictions, references and the optional inputs (group_ids)

    def row(*cells):
        return list(cells) + [""] * (width - len(cells))

    blank = pd.DataFrame([row(), row()], columns=names)
    with pytest.raises(WidgetInputError, match="the form is empty"):
        compute_from_table(module, blank, "")
    with pytest.raises(WidgetInputError, match="the form is empty"):
        compute_from_table(module, pd.DataFrame(columns=names), "")
    no_refs = pd.DataFrame([row("[0.1, 0.9]")], columns=names)
    with pytest.raises(WidgetInputError, match="fill in the column\\(s\\) references"):
        compute_from_table(module, no_refs, "")
    with pytest.raises(ValueError, match="options must be a JSON object"):
        compute_from_table(module, pd.DataFrame([row("[0.1, 0.9]", "1")], columns=names), "{not json")


@pytest.mark.browser
def test_widget_page_opens_prefilled_and_submits(tmp_path, artifacts_dir):
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    from hardneg.metric_widget import build_metric_widget

    demo = build_metric_widget(load_metric("rcad_accuracy"), f"{metric_path('rcad_accuracy')}/README.md")
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, server_name="127.0.0.1")
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(url)
            page.wait_for_function(  # the card's example fills the form
                "() => document.body.innerText.includes('[0.9, 0.1, 0.2, 0.3, 0.0, 0.4]')", timeout=60_000)
            page.get_by_role("button", name="Submit").click()
            page.wait_for_function("() => document.body.innerText.includes('0.3888888888888889')", timeout=60_000)
            page.screenshot(path=str(artifacts_dir / "metric_widget_prefilled.png"), full_page=False)
            browser.close()
    finally:
        demo.close()
