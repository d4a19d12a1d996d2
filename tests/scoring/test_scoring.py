"""Scoring end to end: the predictions contract, cache hits, resume, bad videos."""

from __future__ import annotations

import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

import hardneg.scoring as scoring
from hardneg.schema import PREDICTIONS_REQUIRED_METADATA, PREDICTIONS_SCHEMA, read_predictions_metadata
from hardneg.scoring import load_benchmark, score_benchmark
from hardneg.video import FrameSettings, decode_frames

FRAMES = FrameSettings(n_frames=4, resize=None)


def _score(tiny_clip, samples, videos, out, cache, config="msrvtt", bench="feint6k", **kw):
    return score_benchmark("tiny-clip", str(samples[bench]), config, out, videos=str(videos), frames=FRAMES,
                           cache_dir=str(cache), progress=False, loaded_model=tiny_clip, **kw)


def test_predictions_file_contract_and_scores(tiny_clip, samples, sample_videos, tmp_path):
    out = tmp_path / "p.parquet"
    run = _score(tiny_clip, samples, sample_videos, out, tmp_path / "cache")
    table = pq.read_table(out)
    assert table.schema.remove_metadata().equals(PREDICTIONS_SCHEMA)
    meta = read_predictions_metadata(table.schema)
    assert set(PREDICTIONS_REQUIRED_METADATA) <= set(meta)
    assert meta["frames"] == FRAMES.identity() and meta["model_id"] == "hardneg/tiny-clip"
    assert meta["task"] == "multiple_choice" and meta["benchmark"] == "feint6k"
    items = load_benchmark(str(samples["feint6k"]), "msrvtt").items
    assert table["id"].to_pylist() == items["id"].to_pylist()
    # independent: score each item directly through the model
    for row, item in zip(table.to_pylist(), items.to_pylist()):
        frames = decode_frames(sample_videos / f"{item['video_id']}.mp4", FRAMES)
        np.testing.assert_allclose(row["scores"], tiny_clip.score(frames, item["captions"]), atol=1e-5)
    assert run.embeddings_computed == items.num_rows and run.embeddings_cached == 0
    assert not list(tmp_path.glob("*.parts-*"))  # the resumable shards are cleaned up after success
    with pytest.raises(FileExistsError, match="--overwrite"):
        _score(tiny_clip, samples, sample_videos, out, tmp_path / "cache")


def test_rerun_and_second_benchmark_hit_the_cache(tiny_clip, samples, sample_videos, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = _score(tiny_clip, samples, sample_videos, tmp_path / "a.parquet", cache)
    calls = []
    real = tiny_clip.encode_video
    monkeypatch.setattr(tiny_clip, "encode_video", lambda v: calls.append(len(v)) or real(v))
    again = _score(tiny_clip, samples, sample_videos, tmp_path / "b.parquet", cache)
    assert calls == [] and again.embeddings_computed == 0 and again.embeddings_cached == first.embeddings_computed
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))
    # FIRE's msrvtt collection shares videos with Feint6K's msrvtt items: those come from the cache
    fire = _score(tiny_clip, samples, sample_videos, tmp_path / "f.parquet", cache, bench="fire")
    shared = {"video7010", "video7011", "video7012", "video7013", "video7014"}
    assert fire.embeddings_cached == len(shared & set(fire.metadata["video_ids"])) > 0
    # retrieval scores: every query against every video of the collection, in metadata order
    data = load_benchmark(str(samples["fire"]), "msrvtt")
    table = pq.read_table(tmp_path / "f.parquet")
    vids = fire.metadata["video_ids"]
    assert vids == data.videos["video_id"].to_pylist()
    video_emb = tiny_clip.encode_video([decode_frames(sample_videos / f"{v}.mp4", FRAMES) for v in vids])
    expected = tiny_clip.similarity(video_emb, tiny_clip.encode_text(data.queries["text"].to_pylist())).T
    np.testing.assert_allclose(np.array(table["scores"].to_pylist()), expected, atol=1e-5)
    # other frame settings are another cache entry
    other = score_benchmark("tiny-clip", str(samples["feint6k"]), "msrvtt", tmp_path / "c.parquet",
                            videos=str(sample_videos), frames=FrameSettings(n_frames=2, resize=None),
                            cache_dir=str(cache), progress=False, loaded_model=tiny_clip)
    assert other.embeddings_computed == first.embeddings_computed


def test_interrupted_run_resumes_without_redoing_finished_batches(tiny_clip, samples, sample_videos, tmp_path, monkeypatch):
    out = tmp_path / "p.parquet"
    real_make = scoring.make_batch_fn
    seen: list[list[str]] = []

    def flaky(spec, model=None):
        fn = real_make(spec, model)

        def wrapped(batch):
            seen.append(list(batch["id"]))
            if len(seen) == 2:
                raise KeyboardInterrupt  # the user pressed Ctrl-C during the second batch
            return fn(batch)

        return wrapped

    monkeypatch.setattr(scoring, "make_batch_fn", flaky)
    with pytest.raises(KeyboardInterrupt):
        _score(tiny_clip, samples, sample_videos, out, tmp_path / "cache", batch_size=2)
    assert not out.exists() and len(list(tmp_path.glob("p.parquet.parts-*"))) == 1
    first_batch = seen[0]
    seen.clear()
    monkeypatch.setattr(scoring, "make_batch_fn", real_make)
    calls: list[list[str]] = []
    monkeypatch.setattr(scoring, "make_batch_fn", lambda spec, model=None: (
        lambda fn: (lambda b: calls.append(list(b["id"])) or fn(b)))(real_make(spec, model)))
    _score(tiny_clip, samples, sample_videos, out, tmp_path / "cache", batch_size=2)
    done = [i for c in calls for i in c]
    assert not set(first_batch) & set(done)  # the finished batch was not recomputed
    assert pq.read_table(out).num_rows == 5


def test_missing_and_broken_videos_are_reported_not_fatal(tiny_clip, samples, sample_videos, tmp_path):
    videos = tmp_path / "videos"
    shutil.copytree(sample_videos, videos)
    (videos / "video7010.mp4").unlink()
    (videos / "video7011.mp4").write_bytes(b"\x00\x01 broken")
    run = _score(tiny_clip, samples, videos, tmp_path / "p.parquet", tmp_path / "cache")
    assert (run.rows, run.scored) == (5, 3)
    vr = run.video_report
    assert (vr["ok"], vr["missing"], vr["unreadable"]) == (3, 1, 1)
    assert vr["missing_ids"] == ["video7010"] and list(vr["unreadable_ids"]) == ["video7011"]
    meta = read_predictions_metadata(pq.read_schema(tmp_path / "p.parquet"))
    assert meta["videos"]["missing"] == 1 and meta["rows_total"] == 5 and meta["rows_scored"] == 3


def test_blind_baseline_needs_no_videos(samples, tmp_path):
    from hardneg.models import load_model

    corpus = tmp_path / "c.txt"
    corpus.write_text("a woman is slicing bread in a kitchen\n")
    m = load_model(f"blind-unigram:{corpus}")
    run = score_benchmark(f"blind-unigram:{corpus}", str(samples["contrast_sets"]), "verb_human", tmp_path / "b.parquet",
                          progress=False, loaded_model=m, cache_dir=str(tmp_path / "cache"))
    assert run.scored == run.rows == 4
    with pytest.raises(ValueError, match="--videos"):
        score_benchmark("tiny-clip", str(samples["contrast_sets"]), "verb_human", tmp_path / "x.parquet", progress=False)


def test_score_cli_reports_bad_videos(samples, sample_videos, tmp_path, capsys):
    from hardneg.cli import main

    videos = tmp_path / "videos"
    shutil.copytree(sample_videos, videos)
    (videos / "video9001.mp4").unlink()
    args = ["score", "--model", "tiny-clip", "--dataset", str(samples["contrast_sets"]), "--config", "verb_human",
            "--videos", str(videos), "--out", str(tmp_path / "p.parquet"), "--frames", "2", "--resize", "0",
            "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--device", "cpu"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "3/4 items scored" in out and "1 missing" in out and "video9001" in out
    # the same command again completes a run that left items out, without --overwrite: nothing it scores is lost
    # (issue 36 N9; tests/scoring/test_rerun_incomplete.py); another run's settings are still refused
    assert main(args) == 0 and "3/4 items scored" in capsys.readouterr().out
    assert main([*args, "--frames", "3"]) == 2 and "--overwrite" in capsys.readouterr().err
    assert main([*args, "--fp16", "--overwrite"]) == 2  # fp16 on a CPU: a clear error, the file is kept
    assert "--fp16 needs a GPU" in capsys.readouterr().err and (tmp_path / "p.parquet").exists()


def test_bad_dataset_arguments_name_the_fix(samples, tmp_path):
    with pytest.raises(ValueError, match="no config 'nope'"):
        load_benchmark(str(samples["feint6k"]), "nope")
    with pytest.raises(ValueError, match="no split"):
        load_benchmark(str(samples["feint6k"]), "msrvtt", ["train"])
    with pytest.raises(FileNotFoundError):
        load_benchmark(str(tmp_path / "missing"), "x")


def test_hub_dataset_ids_load_through_datasets_with_the_commit_as_revision(samples, monkeypatch):
    """No Hub here: the Hub client answers with a fixed commit and load_dataset reads the local build."""
    import datasets
    import huggingface_hub

    class Info:
        sha = "0123456789abcdef0123456789abcdef01234567"

    import hardneg.hub_access

    asked = {}
    monkeypatch.setattr(hardneg.hub_access, "hub_reachable", lambda *a, **k: True)  # the Hub "answers" (mocked below)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info",
                        lambda self, repo, revision=None: asked.setdefault("repo", repo) and Info())
    real_load = datasets.load_dataset
    monkeypatch.setattr(datasets, "load_dataset", lambda repo, config, revision=None: real_load(str(samples["feint6k"]), config))
    data = load_benchmark("video-hardneg/feint6k", "msrvtt")
    assert asked["repo"] == "video-hardneg/feint6k"
    assert data.benchmark == "feint6k" and data.data_revision == Info.sha and data.splits == ["test"]
    assert data.items["id"].to_pylist() == load_benchmark(str(samples["feint6k"]), "msrvtt").items["id"].to_pylist()
