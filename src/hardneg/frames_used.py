"""The frames each video actually gave a run, and how they were taken: part of a result's provenance.

Why: the frame settings (`FrameSettings.identity`) say what was asked, not what a clip gave. A 2 s clip asked for 8
frames at `--fps 1` repeats frames; a clip at 60 fps and one at 24 fps are spaced differently; Qwen2.5-VL places its
frames by their spacing. So every predictions file records, per video decoded in the run, the frame count, the first
frame's time and the mean spacing in seconds (compact: three numbers a video), with a summary over the videos and
the decoding method (decoder, sampling rule or frame recipe, scaler); `hardneg evaluate` copies it into the result's
provenance.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: the sampling rule of each frame recipe (`FrameSettings.recipe`), in words, for provenance
RECIPE_RULES = {
    "qwen-vl-utils": ("lmms-eval 0.7.3's Qwen2-VL wrapper: qwen-vl-utils 0.0.14 fetch_video at 2 frames per second of "
                      "the clip, at least 4, an even count, frames at round(linspace(0, total - 1, n)), then at most "
                      "n_frames by linspace + unique; resized to multiples of 28 within the pixel limits "
                      "(hardneg.frame_recipes)"),
    "qwen-vl-utils-nframes": ("lmms-eval 0.7.3's Qwen2.5-VL chat wrapper: nframes = min(n_frames, the clip's "
                              "frames) floored to even, at least 2, frames at round(linspace(0, total - 1, "
                              "nframes)) (qwen-vl-utils 0.0.14); resized to multiples of 28 within the pixel limits "
                              "(hardneg.frame_recipes)"),
    "vilma-consecutive": ("ViLMA's authors (models/image/run_blip2.py, sample_frame_indices): n consecutive frames "
                          "from a random offset, every frame of a clip of n or fewer; the offset drawn from a "
                          "generator seeded by (0, the clip's frame count) (hardneg.frame_recipes)"),
}


def sampling_rule(frames) -> str:
    """The rule the frames were sampled by: hardneg's own, or the frame recipe's."""
    from hardneg.video import SAMPLING_RULE

    return RECIPE_RULES.get(getattr(frames, "recipe", "hardneg"), SAMPLING_RULE)


def frames_used(decoded) -> tuple[int, float | None, float | None]:
    """(frame count, first frame's time s, mean spacing s) of one decoded video (`hardneg.video.Frames`): the
    spacing is (last - first) / (count - 1) of the times the decoder sampled (repeated frames included); None
    where the decoder gave no times, or one frame."""
    n = int(len(decoded))
    times = getattr(decoded, "times", None)
    if times is None or len(times) == 0:
        return n, None, None
    t = np.asarray(times, np.float64).reshape(-1)
    spacing = float((t[-1] - t[0]) / (len(t) - 1)) if len(t) > 1 else None
    return n, round(float(t[0]), 6), None if spacing is None else round(spacing, 6)


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    v = np.asarray(values, np.float64)
    return {"min": round(float(v.min()), 6), "median": round(float(np.median(v)), 6), "max": round(float(v.max()), 6)}


def frames_used_record(rows, frames, decoding: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record of a run's scored rows (`hardneg.scoring` batch output, columns frame_count, frame_first_s,
    frame_spacing_s): {"method", "videos", "not_decoded", "count", "spacing_s", "per_video": {video id: [count,
    first s, spacing s]}}. A video whose frames came from the embedding cache was not decoded in this run and is
    counted in "not_decoded"."""
    per_video: dict[str, list] = {}
    not_decoded: set[str] = set()
    names = set(getattr(rows, "column_names", ()))
    if "frame_count" in names:
        cols = [rows[c].to_pylist() for c in ("video_id", "frame_count", "frame_first_s", "frame_spacing_s",
                                              "video_status")]
    else:  # output written before these columns existed (a resumed run): nothing recorded
        cols = [rows["video_id"].to_pylist(), *[[None] * rows.num_rows] * 3, rows["video_status"].to_pylist()]
    for vid, n, first, spacing, status in zip(*cols):
        if n is not None:
            per_video.setdefault(vid, [int(n), first, spacing])
        elif status == "ok":
            not_decoded.add(vid)
    not_decoded -= set(per_video)
    method = {"decoder": (decoding or {}).get("decoder", getattr(frames, "decoder", None)),
              "sampling": sampling_rule(frames), "frames": frames.identity() if hasattr(frames, "identity") else None}
    return {"method": method, "videos": len(per_video), "not_decoded": len(not_decoded),
            "count": _stats([v[0] for v in per_video.values()]),
            "spacing_s": _stats([v[2] for v in per_video.values() if v[2] is not None]),
            "per_video": dict(sorted(per_video.items()))}


__all__ = ["RECIPE_RULES", "frames_used", "frames_used_record", "sampling_rule"]
