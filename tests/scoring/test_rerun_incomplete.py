"""Issue 36 N9, the rerun: a predictions file that left items out (a video missing or unreadable, as a killed
decoding worker once made a valid one) is replaced by running the same command again, without --overwrite, since
nothing it scores is lost; a complete file, another run's file, or a rerun that would score fewer items is still
refused (nothing is silently overwritten)."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest

from hardneg.schema import read_predictions_metadata
from hardneg.scoring import score_benchmark
from hardneg.video import FrameSettings

FRAMES = FrameSettings(n_frames=4, resize=None)


def _score(tiny_clip, samples, videos, out, cache, frames=FRAMES):
    return score_benchmark("tiny-clip", str(samples["feint6k"]), "msrvtt", out, videos=str(videos), frames=frames,
                           cache_dir=str(cache), progress=False, loaded_model=tiny_clip)


def test_rerunning_an_incomplete_run_replaces_it_without_overwrite(tiny_clip, samples, sample_videos, tmp_path):
    videos = tmp_path / "videos"
    shutil.copytree(sample_videos, videos)
    good = (videos / "video7011.mp4").read_bytes()
    (videos / "video7011.mp4").write_bytes(b"\x00\x01 broken")
    out, cache = tmp_path / "p.parquet", tmp_path / "cache"
    assert _score(tiny_clip, samples, videos, out, cache).scored == 4
    before = pq.read_table(out)

    with pytest.raises(FileExistsError, match="other frames"):  # another run's settings: refused
        _score(tiny_clip, samples, videos, out, cache, frames=FrameSettings(n_frames=2, resize=None))
    (videos / "video7012.mp4").write_bytes(b"broken too")  # this rerun would lose an item the file scores
    with pytest.raises(FileExistsError, match="it was kept"):
        _score(tiny_clip, samples, videos, out, cache)
    assert pq.read_table(out).equals(before)
    shutil.copy(sample_videos / "video7012.mp4", videos / "video7012.mp4")

    (videos / "video7011.mp4").write_bytes(good)  # the video is readable again: the same command completes the run
    run = _score(tiny_clip, samples, videos, out, cache)
    assert run.scored == 5 and run.video_report["unreadable"] == 0
    meta = read_predictions_metadata(pq.read_schema(out))
    assert meta["rows_scored"] == meta["rows_total"] == 5
    after = {r["id"]: r["scores"] for r in pq.read_table(out).to_pylist()}
    for row in before.to_pylist():  # every item of the first file scored the same
        assert after[row["id"]] == row["scores"]

    with pytest.raises(FileExistsError, match="--overwrite"):  # a complete file is never replaced silently
        _score(tiny_clip, samples, videos, out, cache)
