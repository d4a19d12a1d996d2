"""What the demo computes, kept apart from the page so it can be tested without a browser.

Examples come from built benchmark folders: every declared benchmark found there, read through its
declaration (multiple choice: an item and its candidate captions; retrieval: a query and the
collection's videos), videos from a folder keyed by video id, models from `hardneg.models` (a name,
a Hub id, a local folder, or a Python object). Ranks and Δs use the ranking core's conventions:
higher score = more likely the positive. What a benchmark adds under an example (Feint6K's Δs) is
named by its declaration's `example_views`, never by its name.
"""

from __future__ import annotations

import difflib
import hashlib
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
#: videos one retrieval example ranks: its own, every relevant one, and others of the collection up to this many
#: (a full collection, e.g. FIRE's 1,000 MSR-VTT videos, is for `hardneg score`, not for one click)
MAX_RETRIEVAL_VIDEOS = 32
#: how long chart labels run before wrapping, and how many lines they keep
LABEL_WIDTH, LABEL_LINES = 60, 2


class DemoInputError(ValueError):
    """A user input the demo refuses, with a message meant for the page."""


@dataclass
class Example:
    """One multiple-choice item (a video, its candidate captions) or one retrieval query (a text, the videos).

    For retrieval, `captions` holds the query text once, `candidates` the collection's video ids (ranked by
    the model), `label` the index of the query's own video among them and `relevant` every video judged
    relevant (the declaration's extra labels, e.g. FIRE's)."""

    benchmark: str
    config: str
    split: str
    id: str
    video_id: str
    captions: list[str]
    label: int
    negative_types: list[str]
    task: str = "multiple_choice"
    candidates: list[str] = field(default_factory=list)
    relevant: list[int] = field(default_factory=list)

    @property
    def is_retrieval(self) -> bool:
        return self.task == "retrieval"

    @property
    def query(self) -> str:
        return self.captions[0] if self.is_retrieval else self.captions[self.label]


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
            if bench not in benchmarks.names():
                continue
            decl = benchmarks.get(bench)
            for config in decl.scoreable(card_configs(folder)):
                if decl.is_retrieval:
                    store.examples[(bench, config)] = _retrieval_examples(folder, bench, config)
                    continue
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
            raise FileNotFoundError(f"no benchmark folders under {root}; build them with hardneg build")
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

    def task(self, benchmark: str) -> str:
        exs = next((v for (b, _), v in self.examples.items() if b == benchmark and v), [])
        return exs[0].task if exs else "multiple_choice"

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


def _retrieval_examples(folder: Path, bench: str, config: str) -> list[Example]:
    """One example per query: its text, the collection's videos, its own video and every relevant one."""
    from hardneg.items import load_benchmark, relevant_lists

    data = load_benchmark(str(folder), config, benchmark=bench)
    video_ids, original, relevant = relevant_lists(data.queries, data.videos, data.qrels)
    out = []
    for k, q in enumerate(data.queries.to_pylist()):
        own = int(original[k])
        out.append(Example(bench, config, ",".join(data.splits), str(q["query_id"]), video_ids[own], [str(q["text"])],
                           own, [], task="retrieval", candidates=list(video_ids),
                           relevant=sorted(set(relevant[k]) | {own})))
    return out


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


def shown_order(captions: list[str]) -> list[int]:
    """The order in which the demo lists an item's candidates: a permutation seeded by the captions themselves
    (the same item shows the same order every time). Some benchmarks' files put the true caption first (the
    world's multiple-choice files: `label` 0), so a list in file order would give the answer away, and a tie
    broken by file order would rank the positive first."""
    seed = int.from_bytes(hashlib.sha256("\n".join(captions).encode()).digest()[:8], "big")
    return [int(j) for j in np.random.default_rng(seed).permutation(len(captions))]


def rank_candidates(scores: np.ndarray, captions: list[str], label: int | None,
                    types: list[str] | None) -> tuple[list[int], list[list[Any]]]:
    """Order (best first; equal scores in `shown_order`, never in file order) and table rows: rank, mark,
    caption, score, negative type."""
    place = {j: k for k, j in enumerate(shown_order(captions))}
    s = np.asarray(scores, np.float64)
    order = sorted(range(len(captions)), key=lambda j: (-s[j], place[j]))
    rows = []
    for rank, j in enumerate(order, 1):
        mark = "✓ positive" if j == label else ""
        rows.append([rank, mark, captions[j], round(float(scores[j]), 4), (types[j] if types else "")])
    return order, rows


def example_views(benchmark: str, scores: np.ndarray, label: int | None, types: list[str] | None) -> str:
    """The lines a benchmark's declaration asks for under one example (`example_views`), in its order."""
    from hardneg import benchmarks

    if label is None or benchmark not in benchmarks.names():
        return ""
    lines = [VIEWS[v](scores, label, types or []) for v in benchmarks.get(benchmark).example_views if v in VIEWS]
    return "\n\n".join(lines)


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


#: per-example views a declaration can name in `example_views`
VIEWS = {"delta_s": delta_s_text}


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


def retrieval_subset(example: Example, limit: int = MAX_RETRIEVAL_VIDEOS) -> tuple[list[str], int, list[int]]:
    """(videos to rank, index of the query's own video among them, indices of the relevant ones): the whole
    collection when it is small, else its own video, every relevant one and a fixed draw of the others (seeded
    by the query id, so a rerun ranks the same videos), in collection order."""
    n = len(example.candidates)
    keep = set(example.relevant) | {example.label}
    if n > limit:
        others = [j for j in range(n) if j not in keep]
        rng = random.Random(example.id)
        keep |= set(rng.sample(others, max(0, min(len(others), limit - len(keep)))))
    else:
        keep = set(range(n))
    order = sorted(keep)
    pos = {j: k for k, j in enumerate(order)}
    return [example.candidates[j] for j in order], pos[example.label], sorted(pos[j] for j in example.relevant)


def retrieval_text(example: Example, limit: int = MAX_RETRIEVAL_VIDEOS) -> str:
    """What a retrieval example is: the query, its own video, the other relevant ones, how many videos rank."""
    own = example.candidates[example.label]
    others = [example.candidates[j] for j in example.relevant if j != example.label]
    n, shown = len(example.candidates), len(retrieval_subset(example, limit)[0])
    scope = (f"ranked against all {n} videos of the collection" if shown == n else
             f"ranked against {shown} of the collection's {n} videos (its own, every relevant one, and a fixed "
             "draw of the others)")
    return (f"Query: {example.query}\n✓ its own video: {own}" + (f"\nalso judged relevant: {', '.join(others)}"
                                                                   if others else "") + f"\n{scope}")


def candidates_text(captions: list[str], label: int | None) -> str:
    """The candidate captions one per line in `shown_order` (shuffled: never the file's order, which may put the
    true caption first), the positive marked with ✓."""
    return "\n".join(("✓ " if j == label else "   ") + captions[j] + ("   (positive)" if j == label else "")
                     for j in shown_order(captions))


def verdict_text(order: list[int], label: int | None, n: int, scores=None, what: str = "caption") -> str:
    """One headline whose mark agrees with its words: ✓ when the positive ranks first alone, = when it shares
    the top score (a tie is not a win under the exact tie rule), ✗ when something scored higher. Always states
    the positive's rank; '' without a positive."""
    if label is None:
        return ""
    rank = order.index(label) + 1
    tied = 0
    if scores is not None:
        s = np.asarray(scores, np.float64)
        tied = int((s == s[label]).sum()) - 1
        rank = 1 + int((s > s[label]).sum())
    if rank == 1 and not tied:
        return f"### ✓ Correct — the true {what} ranked 1 of {n}: the model prefers it"
    if rank == 1:
        return (f"### = Tie — the true {what} shares the top score with {tied} other{'s' if tied > 1 else ''} "
                f"(ranked 1 of {n} only on a tie): the model cannot tell them apart")
    return f"### ✗ Fooled — the true {what} ranked {rank} of {n}: the model preferred another {what}"


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


def is_python_spec(name: str) -> bool:
    """'package.module:attribute' (a Python model to import), not an adapter prefix ('st:<id>', 'random:7')."""
    import re

    from hardneg.models import available_models

    head = name.split(":", 1)[0]
    return bool(re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", name)) and head not in available_models()


def load_python_model(spec: str):
    """Import `module:attribute` and make it a model: a class is instantiated, a factory called, an object kept."""
    import importlib
    import inspect

    module, _, attr = spec.partition(":")
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise DemoInputError(f"cannot import {module!r} for model {spec!r} ({exc}); is it on PYTHONPATH?") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise DemoInputError(f"module {module!r} has no {attr!r}; give module:ClassOrObject")
        obj = getattr(obj, part)
    if inspect.isclass(obj):
        obj = obj()
    elif inspect.isfunction(obj) and not _takes_video_and_captions(obj):
        obj = obj()
    return obj


def _takes_video_and_captions(fn) -> bool:
    import inspect

    try:
        return len(inspect.signature(fn).parameters) >= 2
    except (TypeError, ValueError):
        return False


class ModelPool:
    """Models loaded on first use and kept (one per name) for the life of the app.

    A name is what `hardneg.models.load_model` takes (a registered adapter name, a Hub id, a local folder), or
    'module:attribute' for a Python model (`hardneg.models.protocol.as_model` wraps it); `add` registers a
    model object under a name (the Python API of the demo)."""

    def __init__(self, device: str | None = None, max_cached_videos: int = 4096):
        self.device = device
        self._models: dict[str, Any] = {}
        self._video_embeddings: dict[tuple[str, str], np.ndarray] = {}
        self._max_cached = max_cached_videos

    def video_embedding(self, name: str, path: str | os.PathLike) -> np.ndarray:
        """One video's embedding under model `name` (1, D), computed once per (model, file) and kept (bounded):
        a retrieval example reuses the collection's embeddings from the queries before it."""
        key = (name, str(path))
        if key not in self._video_embeddings:
            model = self.get(name)
            emb = model.encode_video([video_frames(path)]) if model.uses_video else np.zeros((1, 0), np.float32)
            if len(self._video_embeddings) >= self._max_cached:
                self._video_embeddings.pop(next(iter(self._video_embeddings)))
            self._video_embeddings[key] = np.asarray(emb)
        return self._video_embeddings[key]

    def add(self, name: str, model) -> str:
        from hardneg.models.protocol import as_model

        self._models[name] = as_model(model)
        return name

    def get(self, name: str):
        from hardneg.models.protocol import as_model
        from hardneg.settings import ModelSpec

        if name not in self._models:
            if is_python_spec(name):
                self._models[name] = as_model(load_python_model(name))
            else:  # the same settings object `hardneg run` and `run_model` load through (`hardneg.settings`)
                self._models[name] = ModelSpec(name, device=self.device).load()
        return self._models[name]


def wrap_label(caption: str, width: int = LABEL_WIDTH, lines: int = LABEL_LINES) -> str:
    """A chart label: the caption wrapped to `lines` lines of about `width` characters (cut with … beyond)."""
    parts = textwrap.wrap(caption, width) or [""]
    if len(parts) > lines:
        parts = parts[:lines]
        parts[-1] = parts[-1][: width - 1] + "…"
    return "\n".join(parts)


def score_bar_chart(scores: np.ndarray, captions: list[str], label: int | None, order: list[int], title: str,
                    score_name: str = "cosine similarity", relevant=()):
    """Horizontal bars from zero (a negative score extends to the left of the zero line), best at the top, the
    positive in green and its label marked ✓ (retrieval: other relevant videos light green); the axis names
    what a score is (`score_name`, from the model). Every label is wrapped so that 21+ candidates fit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [("✓ " if j == label else "") + wrap_label(captions[j]) for j in order]
    n_lines = sum(lab.count("\n") + 1 for lab in labels)
    fig, ax = plt.subplots(figsize=(10, 0.18 * n_lines + 0.1 * len(order) + 1.3))
    ys = np.arange(len(order))[::-1]
    rel = set(relevant)
    colours = ["#55a868" if j == label else "#a6d8b0" if j in rel else "#8c8c8c" for j in order]
    ax.barh(ys, [float(scores[j]) for j in order], left=0.0, color=colours)
    ax.axvline(0.0, color="#333333", linewidth=0.8)
    ax.set_yticks(ys, labels, fontsize=8)
    for tick, j in zip(ax.get_yticklabels(), order):
        if j == label:
            tick.set_color("#1b7a3a")
            tick.set_fontweight("bold")
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.set_xlabel(f"model score: {score_name} (higher = better match)")
    ax.set_title(title, fontsize=10)
    lo, hi = min(0.0, float(np.min(scores))), max(0.0, float(np.max(scores)))
    pad = (hi - lo) * 0.08 or 0.01
    ax.set_xlim(lo - (pad if lo < 0 else 0), hi + pad)
    fig.tight_layout()
    return fig
