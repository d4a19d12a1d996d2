"""Issue 33 §2: no caption is cut silently.

tiny-clip holds every caption of every built-in sample; for any model that says how it tokenizes
(`VideoTextModel.text_context`), scoring counts the captions its tokenizer cuts, names them and the items
the cut left with identical candidates, says so on standard error, records both counts in the predictions
file and in every result; such items still score by the tie rule (chance, never a win).
"""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from hardneg.evaluation import evaluate_predictions
from hardneg.items import load_benchmark
from hardneg.schema import read_predictions_metadata
from hardneg.scoring import score_benchmark
from hardneg.truncation import check_items, identical_groups, tie_identical
from hardneg.video import FrameSettings

FRAMES = FrameSettings(n_frames=4, resize=None)


def _items(folder, config, benchmark):
    data = load_benchmark(str(folder), config, benchmark=benchmark)
    if data.task == "multiple_choice":
        return list(zip(data.items["id"].to_pylist(), data.items["captions"].to_pylist()))
    return [(q, [t]) for q, t in zip(data.queries["query_id"].to_pylist(), data.queries["text"].to_pylist())]


def test_tiny_clip_holds_every_caption_of_every_built_in_sample(tiny_clip, tmp_path):
    from hardneg.datasets import sample_benchmarks
    from hardneg.run import build_default_samples, plan

    folders = build_default_samples(list(sample_benchmarks()), False, tmp_path / "data")
    assert "world" in folders  # the world's captions were the ones cut before (issue 33)
    checked = 0
    for pair in plan(folders):
        report = check_items(tiny_clip, _items(pair.folder, pair.config, pair.benchmark))
        assert report is not None and report.context == 77
        assert report.captions_cut == 0, (pair.key, report.cut)
        checked += report.captions
    assert checked > 300
    # the world's words are whole tokens, not letters: a world caption is short
    from hardneg.world.grammar import parse, render

    caption = render(parse("a small red square moves slowly left above a large blue circle, then it rotates quickly"))
    assert len(tiny_clip.tokenizer(caption)["input_ids"]) <= 22


def _score_short(tiny_clip, samples, sample_videos, tmp_path, monkeypatch, context, bench="feint6k", config="msrvtt"):
    # the model itself cuts at `context` tokens (encode_text truncates at max_length), as a real CLIP cuts at 77
    monkeypatch.setattr(tiny_clip, "max_length", context)
    out = tmp_path / f"{bench}-{context}.parquet"
    run = score_benchmark("tiny-clip", str(samples[bench]), config, out, videos=str(sample_videos), frames=FRAMES,
                          cache_dir=str(tmp_path / "cache"), progress=False, loaded_model=tiny_clip)
    return run, out


def test_a_caption_longer_than_the_context_is_counted_and_named(tiny_clip, samples, sample_videos, tmp_path,
                                                                  monkeypatch, capsys):
    items = _items(samples["feint6k"], "msrvtt", "feint6k")
    lengths = {t: len(tiny_clip.tokenizer(t)["input_ids"]) for _, caps in items for t in caps}
    context = sorted(lengths.values())[len(lengths) // 2]  # about half the captions are longer
    longer = {t for t, n in lengths.items() if n > context}
    assert longer
    run, out = _score_short(tiny_clip, samples, sample_videos, tmp_path, monkeypatch, context)
    meta = read_predictions_metadata(pq.read_schema(out))
    cuts = meta["text_cuts"]
    assert cuts["context"] == context and cuts["captions_cut"] == len(longer) and cuts["captions"] == len(lengths)
    assert {c["caption"] for c in cuts["cut"]} == longer  # named (fewer than NAMED here)
    assert all(c["tokens"] == lengths[c["caption"]] for c in cuts["cut"])
    assert f"{len(longer)} of {len(lengths)} captions are longer than the model's {context}-token" in capsys.readouterr().err
    assert "captions cut" in run.summary()
    result = evaluate_predictions(out, n_resamples=0)  # what results.json holds for this config
    assert result["text_cuts"]["captions_cut"] == len(longer)
    assert any("were cut" in n for n in result["notes"])


def test_predictions_and_results_record_the_versions_that_change_numbers(tiny_clip, samples, sample_videos, tmp_path):
    from importlib.metadata import version

    import hardneg
    from hardneg.versions import NUMBER_PACKAGES

    out = tmp_path / "p.parquet"
    score_benchmark("tiny-clip", str(samples["contrast_sets"]), "gender", out, videos=str(sample_videos),
                    frames=FRAMES, cache_dir=str(tmp_path / "cache"), progress=False, loaded_model=tiny_clip)
    want = {"hardneg": hardneg.__version__, **{name: version(name) for name in NUMBER_PACKAGES}}
    assert set(NUMBER_PACKAGES) == {"transformers", "torch", "tokenizers", "av", "numpy"}
    assert read_predictions_metadata(pq.read_schema(out))["versions"] == want
    provenance = evaluate_predictions(out, n_resamples=0)["provenance"]
    assert provenance["versions"] == want and provenance["scored_versions"] == want


def test_an_item_made_identical_by_the_cut_is_reported_and_ties(tiny_clip, samples, sample_videos, tmp_path,
                                                                monkeypatch, capsys):
    # 3 tokens: start, the first word, end; every caption of an item starts the same way, so all candidates tie
    run, out = _score_short(tiny_clip, samples, sample_videos, tmp_path, monkeypatch, 3)
    items = _items(samples["feint6k"], "msrvtt", "feint6k")
    same_start = [i for i, caps in items if len({c.split()[0].lower() for c in caps}) == 1]
    assert same_start
    cuts = read_predictions_metadata(pq.read_schema(out))["text_cuts"]
    assert cuts["items_identical"] == len(same_start)
    assert sorted(e["id"] for e in cuts["identical"]) == sorted(same_start)
    err = capsys.readouterr().err
    assert "made two or more candidates identical" in err and same_start[0] in err
    table = pq.read_table(out).to_pylist()
    for row in table:
        if row["id"] in same_start:
            assert len(set(row["scores"])) == 1, row  # exactly tied, not float noise
    result = evaluate_predictions(out, n_resamples=0)
    assert result["text_cuts"]["items_identical"] == len(same_start)
    assert result["metrics"]["R@1"]["value"] == pytest.approx(1 / 6)  # every item a full tie: chance, never a win


def test_a_model_that_does_not_say_how_it_tokenizes_is_not_known():
    assert check_items(object(), [("a", ["x", "y"])]) is None


def test_identical_groups_and_exact_ties():
    seen = {"a b c": (1, 2), "a b d": (1, 2), "x": (3,), "a b c again": (1, 2)}
    assert identical_groups(["a b c", "x", "a b d"], seen) == [[0, 2]]
    assert identical_groups(["a b c", "a b c"], seen) == []  # the same text twice is the data's, not the cut's
    assert tie_identical([0.3, 0.1, 0.30001], [[0, 2]]) == [0.3, 0.1, 0.3]
    assert np.array_equal(tie_identical([1.0, 2.0], []), [1.0, 2.0])
