"""What the demo computes, kept apart from the page so it can be tested without a browser.

Examples come from built benchmark folders (multiple-choice configs), videos from a folder
keyed by video id, models from `hardneg.models`. Ranks and Δs use the ranking core's
conventions: higher score = more likely the positive.
"""

from __future__ import annotations

import difflib
import html
import os
import random
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hardneg.evaluation import ACTION_TYPES, OBJECT_TYPES
from hardneg.video import FrameSettings, VideoDecodeError, VideoFolder, decode_frames, probe_video

#: Upload limits: short clips only (the demo shares one GPU).
ALLOWED_EXTENSIONS = (".mp4", ".webm", ".mov", ".mkv", ".avi", ".gif")
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
MAX_DURATION_S = 60.0
MAX_CAPTIONS = 25
#: largest frame accepted (1080p): bigger videos are refused before decoding
MAX_WIDTH, MAX_HEIGHT = 1920, 1080
MAX_PIXELS = MAX_WIDTH * MAX_HEIGHT
FRAMES = FrameSettings(n_frames=8, resize=224)
#: characters of typed text echoed back in a message
MAX_ECHO = 80
#: how long chart labels run before wrapping, and how many lines they keep
LABEL_WIDTH, LABEL_LINES = 60, 2


class DemoInputError(ValueError):
    """A user input the demo refuses, with a message meant for the page."""


@dataclass
class Example:
    benchmark: str
    config: str
    split: str
    id: str
    video_id: str
    captions: list[str]
    label: int
    negative_types: list[str]


@dataclass
class ExampleStore:
    """Multiple-choice examples of the built benchmarks found under a data folder."""

    root: Path
    examples: dict[tuple[str, str], list[Example]] = field(default_factory=dict)

    @classmethod
    def load(cls, root: str | os.PathLike) -> "ExampleStore":
        from hardneg import benchmarks
        from hardneg.items import card_configs, folder_benchmark, load_benchmark

        store = cls(Path(root))
        for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
            bench = folder_benchmark(folder)
            if bench not in benchmarks.names() or benchmarks.get(bench).is_retrieval:
                continue  # retrieval has no per-item candidate list to show
            for config in benchmarks.get(bench).scoreable(card_configs(folder)):  # not companions (training pairs)
                data = load_benchmark(str(folder), config)
                rows = data.items.to_pylist()
                split_of = {}
                for s in data.splits:
                    for r in load_benchmark(str(folder), config, [s]).items["id"].to_pylist():
                        split_of[r] = s
                store.examples[(bench, config)] = [
                    Example(bench, config, split_of.get(r["id"], ""), r["id"], r["video_id"], list(r["captions"]),
                            int(r["label"]), list(r["negative_types"])) for r in rows]
        if not store.examples:
            raise FileNotFoundError(f"no multiple-choice benchmark folders under {root}; build them with hardneg build")
        return store

    def benchmarks(self) -> list[str]:
        from hardneg import benchmarks

        order = benchmarks.names()
        return sorted({b for b, _ in self.examples}, key=order.index)

    def configs(self, benchmark: str) -> list[str]:
        return [c for b, c in self.examples if b == benchmark]

    def ids(self, benchmark: str, config: str, query: str = "") -> list[str]:
        exs = self.examples.get((benchmark, config), [])
        q = query.strip().lower()
        return [e.id for e in exs if not q or any(q in c.lower() for c in e.captions) or q in e.id.lower()]

    def get(self, benchmark: str, config: str, example_id: str) -> Example:
        for e in self.examples.get((benchmark, config), []):
            if e.id == example_id:
                return e
        raise DemoInputError(f"example {example_id!r} is not in {benchmark}/{config}; pick one from the list")

    def random_id(self, benchmark: str, config: str, rng: random.Random) -> str:
        ids = self.ids(benchmark, config)
        if not ids:
            raise DemoInputError(f"{benchmark}/{config} has no examples")
        return rng.choice(ids)


def word_diff(positive: str, negative: str) -> list[tuple[str, str | None]]:
    """The negative's words, with those that differ from the positive labelled "changed"."""
    a, b = positive.split(), negative.split()
    out: list[tuple[str, str | None]] = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        for w in b[j1:j2]:
            out.append((w + " ", None if tag == "equal" else "changed"))
    return out


def diff_highlights(captions: list[str], label: int, order: list[int]) -> list[tuple[str, str | None]]:
    """One HighlightedText value: every negative in rank order, changed words marked."""
    out: list[tuple[str, str | None]] = []
    for rank, j in enumerate(order, 1):
        if j == label:
            continue
        out.append((f"#{rank}: ", None))
        out.extend(word_diff(captions[label], captions[j]))
        out.append(("\n", None))
    return out


def rank_candidates(scores: np.ndarray, captions: list[str], label: int | None,
                    types: list[str] | None) -> tuple[list[int], list[list[Any]]]:
    """Order (best first) and table rows: rank, mark, caption, score, negative type."""
    order = [int(j) for j in np.argsort(-np.asarray(scores), kind="stable")]
    rows = []
    for rank, j in enumerate(order, 1):
        mark = "✓ positive" if j == label else ""
        rows.append([rank, mark, captions[j], round(float(scores[j]), 4), (types[j] if types else "")])
    return order, rows


def delta_s_text(scores: np.ndarray, label: int, types: list[str]) -> str:
    """Feint6K's Δs = s(v, negative) − s(v, positive) for object vs action swaps, as Markdown."""
    s = np.asarray(scores, np.float64)
    parts = []
    for kind, kinds in (("object", OBJECT_TYPES), ("action", ACTION_TYPES)):
        idx = [j for j, t in enumerate(types) if t in kinds]
        if idx:
            d = s[idx] - s[label]
            parts.append(f"**{kind} swap** Δs mean {d.mean():+.4f} (negative for {int((d < 0).sum())}/{len(d)})")
    if not parts:
        return "Δs (Feint6K): this example has no negatives marked as object or action swaps."
    note = "" if len(parts) == 2 else " — only one kind of swap in this example"
    return "Δs = s(video, negative) − s(video, positive); an ideal model gives Δs < 0. " + "; ".join(parts) + note


def check_upload(path: str | None) -> float:
    """Refuse uploads that are not short, decodable videos of at most 1080p; returns the duration in seconds.

    Only the container header is read (`hardneg.video.probe_video`); nothing is decoded here."""
    if not path:
        raise DemoInputError("upload a video first (mp4, webm, mov, mkv, avi or gif; at most "
                             f"{MAX_DURATION_S:.0f} s, {MAX_UPLOAD_BYTES // 2**20} MB and {MAX_WIDTH}x{MAX_HEIGHT})")
    p = Path(path)
    if p.suffix.lower() not in ALLOWED_EXTENSIONS:
        raise DemoInputError(f"{echo(p.suffix) if p.suffix else 'this file'} is not a supported video format; "
                             f"use one of {', '.join(ALLOWED_EXTENSIONS)}")
    size = p.stat().st_size
    if size > MAX_UPLOAD_BYTES:
        raise DemoInputError(f"the video is {size / 1e6:.1f} MB; the limit is {MAX_UPLOAD_BYTES / 1e6:.0f} MB")
    try:
        info = probe_video(p)
    except VideoDecodeError as exc:
        reason = "it has no video stream" if "no video stream" in str(exc) else "its header cannot be read"
        raise DemoInputError(f"the video cannot be read ({reason}); try re-encoding it as mp4 (H.264)") from None
    if info.width * info.height > MAX_PIXELS or max(info.width, info.height) > MAX_WIDTH:
        raise DemoInputError(f"the video is {info.width}x{info.height}; the limit is {MAX_WIDTH}x{MAX_HEIGHT} "
                             "(downscale it, e.g. ffmpeg -i IN -vf scale=-2:720 OUT.mp4)")
    duration = info.duration or 0.0
    if duration > MAX_DURATION_S:
        raise DemoInputError(f"the video is {duration:.0f} s long; the limit is {MAX_DURATION_S:.0f} s")
    return duration


def echo(text: str, limit: int = MAX_ECHO) -> str:
    """Typed text for a message rendered as HTML (Gradio's warnings): quoted, cut, and HTML-escaped."""
    text = str(text)
    quoted = repr(text if len(text) <= limit else text[:limit] + "…")
    return html.escape(quoted, quote=True)


def candidates_text(captions: list[str], label: int | None) -> str:
    """The candidate captions one per line, the positive marked with ✓."""
    return "\n".join(("✓ " if j == label else "   ") + c + ("   (positive)" if j == label else "")
                     for j, c in enumerate(captions))


def verdict_text(order: list[int], label: int | None, n: int) -> str:
    """'Positive ranked k of n' (always shown, whatever k is), or '' without a positive."""
    if label is None:
        return ""
    rank = order.index(label) + 1
    tail = "correct: the model prefers the true caption" if rank == 1 else "the model was fooled"
    return f"### ✓ Positive ranked {rank} of {n} — {tail}"


def parse_captions(text: str) -> list[str]:
    """Captions typed one per line; the first is taken as the positive."""
    caps = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if len(caps) < 2:
        raise DemoInputError("type at least two captions, one per line (the first one is the positive)")
    if len(caps) > MAX_CAPTIONS:
        raise DemoInputError(f"at most {MAX_CAPTIONS} captions, got {len(caps)}")
    return caps


def video_frames(path: str | os.PathLike) -> np.ndarray:
    return decode_frames(path, FRAMES, max_pixels=MAX_PIXELS)


def example_video_path(videos: VideoFolder, example: Example) -> Path:
    p = videos.path(example.video_id)
    if p is None:
        raise DemoInputError(f"the video {example.video_id} of example {example.id} is not available in this demo")
    return p


class ModelPool:
    """Models loaded on first use and kept (one per name) for the life of the app."""

    def __init__(self, device: str | None = None):
        self.device = device
        self._models: dict[str, Any] = {}

    def get(self, name: str):
        from hardneg.models import load_model

        if name not in self._models:
            self._models[name] = load_model(name, device=self.device)
        return self._models[name]


def wrap_label(caption: str, width: int = LABEL_WIDTH, lines: int = LABEL_LINES) -> str:
    """A chart label: the caption wrapped to `lines` lines of about `width` characters (cut with … beyond)."""
    parts = textwrap.wrap(caption, width) or [""]
    if len(parts) > lines:
        parts = parts[:lines]
        parts[-1] = parts[-1][: width - 1] + "…"
    return "\n".join(parts)


def score_bar_chart(scores: np.ndarray, captions: list[str], label: int | None, order: list[int], title: str):
    """Horizontal bars, best at the top, the positive in green and its label marked ✓; every label wrapped so
    that 21+ candidates fit (the figure grows with the number of label lines)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [("✓ " if j == label else "") + wrap_label(captions[j]) for j in order]
    n_lines = sum(lab.count("\n") + 1 for lab in labels)
    fig, ax = plt.subplots(figsize=(10, 0.18 * n_lines + 0.1 * len(order) + 1.3))
    ys = np.arange(len(order))[::-1]
    colours = ["#55a868" if j == label else "#8c8c8c" for j in order]
    ax.barh(ys, [float(scores[j]) for j in order], color=colours)
    ax.set_yticks(ys, labels, fontsize=8)
    for tick, j in zip(ax.get_yticklabels(), order):
        if j == label:
            tick.set_color("#1b7a3a")
            tick.set_fontweight("bold")
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.set_xlabel("model score (cosine similarity; higher = better match)")
    ax.set_title(title, fontsize=10)
    lo, hi = float(np.min(scores)), float(np.max(scores))
    pad = (hi - lo) * 0.1 or 0.01
    ax.set_xlim(lo - pad, hi + pad)
    fig.tight_layout()
    return fig
