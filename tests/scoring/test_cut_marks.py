"""Issue 41 item 6: captions the tokenizer cut are visible where people look: a mark on the row of the printed
results table (with a footnote saying what it means), a total per benchmark in results.json, and no misleading
transformers warning ("... will result in indexing errors") when the run already reports the cut."""

from __future__ import annotations

import json

from hardneg.items import load_benchmark
from hardneg.run import format_table, run_model
from hardneg import truncation
from hardneg.video import FrameSettings

FRAMES = FrameSettings(n_frames=4, resize=None)
WARNING_KEY = "sequence-length-is-longer-than-the-specified-maximum"


def _captions(folder, config):
    data = load_benchmark(str(folder), config, benchmark="feint6k")
    return list(zip(data.items["id"].to_pylist(), data.items["captions"].to_pylist()))


def test_a_cut_run_marks_its_rows_and_totals_the_benchmark(tiny_clip, samples, sample_videos, tmp_path, monkeypatch):
    items = _captions(samples["feint6k"], "msrvtt")
    lengths = sorted(len(tiny_clip.tokenizer(t)["input_ids"]) for _, caps in items for t in caps)
    monkeypatch.setattr(tiny_clip, "max_length", lengths[len(lengths) // 2])  # the model cuts about half
    out = tmp_path / "run"
    results = run_model(tiny_clip, benchmarks="feint6k", data=samples["feint6k"], videos=sample_videos, out=out,
                        frames=FRAMES, resamples=0, cache_dir=tmp_path / "cache", model_id="local/cut")
    stored = json.loads((out / "results.json").read_text())
    configs = {k: v for k, v in stored.items() if k.startswith("feint6k/")}
    assert configs and all(truncation.cut_count(v["text_cuts"]) for v in configs.values())
    number = stored["feint6k"]  # the benchmark's own entry: a total over the configs of its number
    assert number["text_cuts"]["captions_cut"] == sum(configs[f"feint6k/{c}"]["text_cuts"]["captions_cut"]
                                                      for c in number["configs"])
    assert number["text_cuts"]["configs_cut"] == number["configs"]
    table = format_table(results, "results")
    rows = [line for line in table.splitlines() if line.startswith("feint6k")]
    assert rows and all(truncation.CUT_MARK in line for line in rows), table  # every feint6k row: configs and the number
    assert f"{truncation.CUT_MARK} the model's tokenizer cut captions" in table
    cut = configs["feint6k/msrvtt"]["text_cuts"]
    assert f"feint6k/msrvtt: {cut['captions_cut']} of {cut['captions']} captions cut" in table


def test_an_uncut_run_has_no_mark(tiny_clip, samples, sample_videos, tmp_path):
    results = run_model(tiny_clip, benchmarks="feint6k", data=samples["feint6k"], videos=sample_videos,
                        out=tmp_path / "run", frames=FRAMES, resamples=0, cache_dir=tmp_path / "cache")
    assert truncation.CUT_MARK not in format_table(results, "results")
    assert results["feint6k"]["text_cuts"]["captions_cut"] == 0


def test_the_cut_check_does_not_print_transformers_indexing_warning(tiny_clip):
    import logging

    said: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: said.append(record.getMessage())
    logger = logging.getLogger("transformers")  # the library's root logger (its own handler writes to stderr)
    logger.addHandler(handler)
    long_caption = " ".join(["a person slowly walks a dog"] * 30)  # far past the 77-token context
    tiny_clip.tokenizer.deprecation_warnings.pop(WARNING_KEY, None)  # the warning is said once per tokenizer
    try:
        report = truncation.check_items(tiny_clip, [("q1", [long_caption, long_caption + " again"])])
    finally:
        logger.removeHandler(handler)
    assert report.captions_cut == 2 and report.items_identical == 1  # the cut is counted: we say it ourselves
    assert not [m for m in said if "indexing errors" in m or "Token indices sequence length" in m], said


def test_stored_counts_are_read_safely_and_totalled():
    assert truncation.cut_count({"captions_cut": 3}) == 3
    for bad in ({"captions_cut": True}, {"captions_cut": -1}, {"captions_cut": "7"}, {"captions_cut": 10**30},
                {"captions_cut": 2.5}, None, [], "x"):
        assert truncation.cut_count(bad) == 0
    assert truncation.total([None, None]) is None  # no config's model said how it tokenizes
    t = truncation.total([{"captions": 10, "captions_cut": 2, "items_identical": 1, "context": 77}, None,
               {"captions": 5, "captions_cut": 0, "items_identical": 0, "context": 77}])
    assert t == {"captions": 15, "captions_cut": 2, "items_identical": 1, "context": 77, "configs_known": 2,
                 "configs_unknown": 1}
