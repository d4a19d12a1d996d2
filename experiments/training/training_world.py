"""The in-memory world of the training experiment (`experiments/training/`): scenes rendered straight to frames, their items and negatives.

Why in memory: the experiment needs >= 10,000 training scenes, and writing them as H.264 files
and decoding them back costs minutes of one core per thousand scenes. The frames here are
`hardneg.world.render_frames` (the pixels the world's videos encode, without H.264's loss), the
8 frames the decoder samples (`hardneg.video.uniform_indices`), built by a process pool; the
items are `hardneg.world.negatives.scene_items` (the benchmark's verified candidates); the
world's own training negatives are `word_negatives` (single-slot, checked false).

Generator negatives (PoSRank's generators need spaCy, which a GPU machine may lack) are made
once by `make_generator_negatives` and kept in a compact file (each negative as the positive's
common prefix and suffix lengths and the middle that differs), read back by
`read_generator_negatives`, which checks that the file was made for the same captions.
"""

from __future__ import annotations

import gzip
import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

N_FRAMES = 8
#: attribute -> (classes, how it is read from a scene); the probe's targets (issue 28, item 1)
ATTRIBUTES = ("noun", "adjective", "size", "verb", "adverb", "preposition", "action", "direction", "sequence",
              "manner")
#: generator negatives: key -> (generator, settings). In-world vocabulary tier only (see docs/training.md)
IN_WORLD = {"tiers": ["vocabulary"], "skip_targets": "list"}
GENERATORS = {
    "word": ("posrank", {**IN_WORLD, "k": 16}),
    "phrase": ("posrank_phrase", {**IN_WORLD, "k": 16}),
    "action": ("posrank", {**IN_WORLD, "parts_of_speech": ["verb"], "k": 16}),
}


class Data:
    """Everything a run needs, as arrays (shared by every run; saved once for worker processes)."""

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]):
        self.a, self.meta = arrays, meta

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for k, v in self.a.items():
            np.save(folder / f"{k}.npy", v, allow_pickle=False)
        (folder / "meta.json").write_text(json.dumps(self.meta))

    @classmethod
    def load(cls, folder: Path) -> "Data":
        meta = json.loads((folder / "meta.json").read_text())
        return cls({k: np.load(folder / f"{k}.npy", allow_pickle=False) for k in meta["arrays"]}, meta)


def attributes(scene) -> dict[str, int]:
    """Class index of every probed attribute (-1: the scene has none, e.g. no direction without `moves`)."""
    from hardneg.world import vocab

    a = scene.objects[0]
    e1, e2 = scene.events
    moving = [e for e in (e1, e2) if e.direction is not None]
    return {
        "noun": vocab.SHAPES.index(a.shape), "adjective": list(vocab.COLOURS).index(a.colour),
        "size": list(vocab.SIZES).index(a.size), "verb": vocab.ACTIONS.index(e1.verb),
        "adverb": vocab.MANNERS.index(e1.manner), "preposition": vocab.RELATIONS.index(scene.relation),
        "action": vocab.ACTIONS.index(e2.verb),
        "direction": list(vocab.DIRECTIONS).index(moving[0].direction) if moving else -1,
        "sequence": int(vocab.ACTIONS.index(e1.verb) < vocab.ACTIONS.index(e2.verb)),
        "manner": vocab.MANNERS.index(e2.manner),
    }


def n_classes() -> dict[str, int]:
    from hardneg.world import vocab

    return {"noun": len(vocab.SHAPES), "adjective": len(vocab.COLOURS), "size": len(vocab.SIZES),
            "verb": len(vocab.ACTIONS), "adverb": len(vocab.MANNERS), "preposition": len(vocab.RELATIONS),
            "action": len(vocab.ACTIONS), "direction": len(vocab.DIRECTIONS), "sequence": 2,
            "manner": len(vocab.MANNERS)}


def closed_vocabulary_texts() -> list[str]:
    """Every word a world caption can hold: the tiny model's vocabulary, independent of any negatives."""
    from hardneg.world import vocab

    return [" ".join(w for words in vocab.SLOT_WORDS.values() for w in words) + " a , then it"]


def action_rewrites(scene, k: int = 16) -> list[str]:
    """Feint6K's setting for Eq. 1 in the world: a BLIND rewriter of the action (the second event's verb,
    manner and direction drawn uniformly, the true one included), like an LLM that is asked for
    negatives and does not know the video. Some rewrites are therefore true of the scene (verbatim the
    positive's facts): the teacher's labels (`hardneg.world.truth.check`) are not all one value, so
    Eq. 1's filter has something to filter (issue 34: the verified action swaps were all false)."""
    from dataclasses import replace

    from hardneg.world import vocab
    from hardneg.world.grammar import Event, well_formed_problem

    rng = np.random.default_rng([scene.seed, scene.index, 4242])
    cap, out = scene.caption, []
    for _ in range(50 * k):
        if len(out) == k:
            break
        verb = vocab.ACTIONS[rng.integers(len(vocab.ACTIONS))]
        manner = vocab.MANNERS[rng.integers(len(vocab.MANNERS))]
        dirs = list(vocab.DIRECTIONS)
        direction = dirs[rng.integers(len(dirs))] if verb in vocab.DIRECTIONAL else None
        c = replace(cap, e2=Event(verb, manner, direction))
        if well_formed_problem(c) is None:
            out.append(c.text())
    return out


def oracle_similarity(positive: str, candidate: str) -> float:
    """The oracle teacher's caption similarity for Feint6K Eq. 2: the share of the world's 13 caption
    slots (`hardneg.world.grammar.SLOTS`) in which `candidate` states what `positive` states. It stands
    in for sim(e_p, e_t) of an LLM's embeddings, computed from the world's truth tables: no download."""
    from hardneg.world.grammar import SLOTS, parse

    p, c = parse(positive), parse(candidate)
    return sum(p.get(s) == c.get(s) for s in SLOTS) / len(SLOTS)


def _scene_record(job: tuple) -> dict[str, Any]:
    """One scene: frames, caption, attributes, and (by role) its items and the world's training negatives."""
    from hardneg.video import uniform_indices
    from hardneg.world import sample_scene
    from hardneg.world.draw import render_frames
    from hardneg.world.grammar import render_spans
    from hardneg.world.negatives import POS_ORDER, scene_items, word_negatives
    from hardneg.world.truth import check

    seed, split, index, want_items, want_negatives, judge_texts = job[:6]
    rewrites = job[6] if len(job) > 6 else 0
    scene = sample_scene(seed, split, index)
    frames = render_frames(scene)
    rec: dict[str, Any] = {"caption": scene.text, "attrs": attributes(scene),
                           "frames": frames[uniform_indices(len(frames), N_FRAMES)]}
    if want_items == "one":  # the release's layout (issue 34): ONE item per test scene, `benchmark_item`
        from hardneg.world.negatives import benchmark_item

        item = benchmark_item(scene)
        rec["items"] = [(item.kind, item.category, [render_spans(item.positive)[0]]
                         + [render_spans(c.caption)[0] for c in item.negatives])]
    elif want_items:
        rec["items"] = [(item.kind, item.category, [render_spans(item.positive)[0]]
                         + [render_spans(c.caption)[0] for c in item.negatives])
                        for family in scene_items(scene).values() for item in family]
    if want_negatives:
        rec["world_negatives"] = {pos: word_negatives(scene, pos, k=16) for pos in POS_ORDER}
    if judge_texts:  # the oracle teacher's labels: 1 when the caption is true of the scene
        rec["truth"] = [int(check(scene, t) == "true") for t in judge_texts]
    if rewrites:  # Eq. 1's candidates and the oracle teacher's labels
        rec["rewrites"] = action_rewrites(scene, rewrites)
        rec["rewrite_truth"] = [int(check(scene, t) == "true") for t in rec["rewrites"]]
    return rec


def build(seed: int, n_train: int, n_val: int, n_test: int, n_train_eval: int, workers: int = 1,
          judge: dict[int, list[str]] | None = None, progress: bool = True, test_items: str | bool = True,
          rewrites: int = 0, negatives_parts: tuple[str, ...] = ("train",)) -> dict[str, Any]:
    """The experiment's world: train scenes (train split 0..n_train-1), validation scenes (train split
    n_train..n_train+n_val-1, never trained on), test scenes (test split 0..n_test-1).

    `test_items="one"` gives each test scene the one item the release gives it (`benchmark_item`);
    True gives every item of the scene (the time-budget design's layout). `rewrites` > 0 adds that many
    blind action rewrites with their truth labels to each training scene (`action_rewrites`).
    `negatives_parts` are the parts whose scenes get the world's word-level negatives (`word_negatives`): the
    training scenes always; the validation and test scenes too for PoSRank's evaluation (issue 50).
    Deterministic in its arguments whatever `workers` is (each scene depends on (seed, split, index) only)."""
    judge = judge or {}
    jobs = [(seed, "train", i, i < n_train_eval, True, judge.get(i), rewrites) for i in range(n_train)]
    jobs += [(seed, "train", n_train + i, True, "val" in negatives_parts, None) for i in range(n_val)]
    jobs += [(seed, "test", i, test_items, "test" in negatives_parts, None) for i in range(n_test)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            recs = list(pool.map(_scene_record, jobs, chunksize=64))
    else:
        recs = []
        for k, job in enumerate(jobs):
            recs.append(_scene_record(job))
            if progress and (k + 1) % 500 == 0:
                print(f"  world: {k + 1}/{len(jobs)} scenes", flush=True)
    parts = {"train": recs[:n_train], "val": recs[n_train:n_train + n_val], "test": recs[n_train + n_val:]}
    return {name: {"frames": np.stack([r["frames"] for r in rs]) if rs else np.zeros((0,), np.uint8),
                   "captions": [r["caption"] for r in rs],
                   "attrs": {a: np.asarray([r["attrs"][a] for r in rs], np.int64) for a in ATTRIBUTES},
                   "items": [r.get("items") for r in rs],
                   "world_negatives": [r.get("world_negatives") for r in rs],
                   "truth": [r.get("truth") for r in rs],
                   "rewrites": [r.get("rewrites") for r in rs], "rewrite_truth": [r.get("rewrite_truth") for r in rs]}
            for name, rs in parts.items()}


# ------------------------------------------------------------------------ generator negatives


def _encode(pos: str, neg: str) -> list:
    i = 0
    while i < min(len(pos), len(neg)) and pos[i] == neg[i]:
        i += 1
    j = 0
    while j < min(len(pos), len(neg)) - i and pos[len(pos) - 1 - j] == neg[len(neg) - 1 - j]:
        j += 1
    return [i, j, neg[i:len(neg) - j]]


def _decode(pos: str, code: list) -> str:
    i, j, mid = code
    return pos[:i] + mid + pos[len(pos) - j:]


def make_generator_negatives(captions: list[str], out: Path, keys=tuple(GENERATORS)) -> Path:
    """Run the generators of `GENERATORS` on `captions` (spaCy needed) and write them compactly to `out`."""
    import tempfile

    from hardneg import __version__
    from hardneg.generators import generator_info
    from hardneg.io import atomic_write_bytes
    from hardneg.training.data import generate_negatives

    body: dict[str, Any] = {"captions": captions, "n_captions": len(captions),
                            "made_by": f"video-hardneg {__version__}", "generators": {}, "negatives": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for key in keys:
            gen, settings = GENERATORS[key]
            negs = generate_negatives(gen, captions, settings, Path(tmp) / f"{key}.parquet", progress=True)
            body["generators"][key] = {"generator": gen, "version": generator_info(gen)[1], "settings": settings,
                                       "vocabulary": "the training captions' (PoSRank's last tier)"}
            body["negatives"][key] = [[_encode(c, n) for cat in sorted(negs.by_caption.get(c, {}))
                                       for n in negs.by_caption[c][cat]] for c in captions]
    atomic_write_bytes(out, gzip.compress(json.dumps(body, separators=(",", ":")).encode(), mtime=0))
    return out


def read_generator_negatives(path: Path, captions: list[str]) -> tuple[dict[str, list[list[str]]], dict]:
    """{key: negatives per caption} from a file of `make_generator_negatives`, for exactly these captions."""
    body = json.loads(gzip.decompress(Path(path).read_bytes()))
    row = {c: i for i, c in enumerate(body["captions"])}
    missing = [c for c in captions if c not in row]
    if missing:
        raise SystemExit(f"{path} has no negatives for {len(missing)} of the {len(captions)} training captions (e.g. "
                         f"{missing[0]!r}); remake it with `python experiments/training/training_timebudget.py --make-negatives {path}` "
                         "and the same world settings")
    out = {k: [[_decode(c, code) for code in per[row[c]]] for c in captions] for k, per in body["negatives"].items()}
    return out, body["generators"]


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
