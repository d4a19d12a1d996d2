"""A scene (the world state of one video) and how one is drawn at random, deterministically.

Every fact a caption can state is drawn uniformly and independently first (both objects' size,
colour and shape; the relation; two different actions, their manners and the direction of a
move); only then are positions found that make the relation hold in every frame
(`hardneg.world.motion`). So each word of a slot is equally likely in a true caption, whatever
the other slots hold: the world gives a text-only model nothing to learn from a positive's
wording (see `hardneg.world.negatives`).

Scene `index` of `split` under `seed` depends on those three numbers only: adding scenes to a
world, or making another split, leaves existing scenes unchanged.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from hardneg.world import vocab
from hardneg.world.grammar import Caption, Event, Phrase, render

#: bumped whenever the same (seed, split, index) would give another scene or other pixels
WORLD_VERSION = "2"  # 2: quick swings do 2.5 cycles (2 vanished in 8 sampled frames)
SPLITS = ("train", "test")
#: how far inside the frame an object's centre stays, in units of its radius (1: never clipped; 0.5 keeps every fact combination placeable)
KEEP_IN = 0.5


@dataclass(frozen=True)
class WorldConfig:
    """How big and long the videos are. The defaults let a CPU train a small model in minutes."""

    width: int = 64
    height: int = 64
    n_frames: int = 16
    fps: int = 8

    def __post_init__(self) -> None:
        for name in ("width", "height"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 32 or v % 2:
                raise ValueError(f"WorldConfig.{name} must be an even integer >= 32 (H.264 halves the colour planes), "
                                 f"got {v!r}")
        if isinstance(self.n_frames, bool) or not isinstance(self.n_frames, int) or self.n_frames < 4:
            raise ValueError(f"WorldConfig.n_frames must be an integer >= 4 (two events of two frames or more), "
                             f"got {self.n_frames!r}")
        if isinstance(self.fps, bool) or not isinstance(self.fps, int) or not 1 <= self.fps <= 60:
            raise ValueError(f"WorldConfig.fps must be an integer from 1 to 60, got {self.fps!r}")


@dataclass(frozen=True)
class WorldObject:
    """One object in its first frame: words, centre (pixels), angle (degrees), drawing order (higher on top)."""

    shape: str
    colour: str
    size: str
    x: float
    y: float
    angle: float
    z: int

    @property
    def phrase(self) -> Phrase:
        return Phrase(self.size, self.colour, self.shape)


@dataclass(frozen=True)
class Scene:
    """The world state of one video: objects (the subject first), the subject's events in order, frame settings."""

    id: str
    split: str
    seed: int
    index: int
    width: int
    height: int
    n_frames: int
    fps: int
    objects: tuple[WorldObject, WorldObject]
    events: tuple[Event, Event]
    relation: str  # the relation the positions were drawn for (the checker recomputes it from them)

    @property
    def side(self) -> float:
        return float(min(self.width, self.height))

    @property
    def config(self) -> WorldConfig:
        return WorldConfig(self.width, self.height, self.n_frames, self.fps)

    @property
    def caption(self) -> Caption:
        """The true caption of the scene (the facts it was drawn from)."""
        a, b = self.objects
        return Caption(a.phrase, self.events[0], self.relation, b.phrase, self.events[1])

    @property
    def text(self) -> str:
        return render(self.caption)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to scenes.jsonl (`hardneg.world.io`)."""
        d = asdict(self)
        d["objects"] = [asdict(o) for o in self.objects]
        d["events"] = [asdict(e) for e in self.events]
        d["caption"] = self.text
        d["world_version"] = WORLD_VERSION
        return d


def check_seed(seed: Any, name: str = "seed") -> int:
    """`seed` as an int, or a ValueError saying what a seed is."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{name} must be a non-negative integer, got {type(seed).__name__} {seed!r}; "
                         "pass e.g. seed=0")
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed}")
    return int(seed)


def scene_id(seed: int, split: str, index: int) -> str:
    """The scene's video id; it names the world version, so a cached video of an older world is never reused."""
    return f"world-v{WORLD_VERSION}-s{seed}-{split}-{index:05d}"


def _rng(seed: int, split: str, index: int) -> np.random.Generator:
    split_code = int.from_bytes(hashlib.sha256(split.encode()).digest()[:4], "little")
    return np.random.default_rng([1, seed, split_code, index])  # 1: the stream of world 1 (same captions in world 2)


def _choice(rng: np.random.Generator, options) -> Any:
    options = list(options)
    return options[int(rng.integers(len(options)))]


def sample_facts(rng: np.random.Generator) -> Caption:
    """The words of a scene, each slot uniform and independent of the others (two different actions)."""
    def phrase():
        return Phrase(_choice(rng, vocab.SIZES), _choice(rng, vocab.COLOURS), _choice(rng, vocab.SHAPES))

    def event(verb):
        direction = _choice(rng, vocab.DIRECTIONS) if verb in vocab.DIRECTIONAL else None
        return Event(verb, _choice(rng, vocab.MANNERS), direction)

    a, b = phrase(), phrase()
    relation = _choice(rng, vocab.RELATIONS)
    v1 = _choice(rng, vocab.ACTIONS)
    v2 = _choice(rng, [v for v in vocab.ACTIONS if v != v1])
    return Caption(a, event(v1), relation, b, event(v2))


def place(facts: Caption, config: WorldConfig, rng: np.random.Generator, tries: int = 64,
          batch: int = 256) -> tuple[WorldObject, WorldObject]:
    """Positions, angles and drawing order that make `facts.relation` hold (and no other relation)."""
    from hardneg.world.motion import relation_checks, subject_offsets

    W, H, T = config.width, config.height, config.n_frames
    side = float(min(W, H))
    off = subject_offsets([(e.verb, e.manner, e.direction) for e in (facts.e1, facts.e2)], T, side)
    ra = vocab.SIZES[facts.a.size] * side * off["scale"]
    rb = vocab.SIZES[facts.b.size] * side
    gap = side / 64
    # centres stay at least KEEP_IN radii inside the frame (the subject's current radius in every frame)
    lo_x, hi_x = (KEEP_IN * ra - off["dx"]).max(), (W - KEEP_IN * ra - off["dx"]).min()
    lo_y, hi_y = (KEEP_IN * ra - off["dy"]).max(), (H - KEEP_IN * ra - off["dy"]).min()
    margin_b = KEEP_IN * rb
    occluding = facts.relation in ("in front of", "behind")
    for _ in range(tries):
        xa0 = np.round(rng.uniform(lo_x, hi_x, batch), 3)  # the JSON keeps 3 decimals: check what is kept
        ya0 = np.round(rng.uniform(lo_y, hi_y, batch), 3)
        xa, ya = xa0[:, None] + off["dx"], ya0[:, None] + off["dy"]
        if occluding:  # put B on the subject's path at one frame, close enough to overlap there
            t = rng.integers(0, T, batch)
            reach = (ra[t] + rb - gap) * 0.8 * np.sqrt(rng.uniform(0, 1, batch))
            turn = rng.uniform(0, 2 * np.pi, batch)
            xb, yb = xa[np.arange(batch), t] + reach * np.cos(turn), ya[np.arange(batch), t] + reach * np.sin(turn)
        else:
            xb, yb = rng.uniform(margin_b, W - margin_b, batch), rng.uniform(margin_b, H - margin_b, batch)
        xb, yb = np.round(xb, 3), np.round(yb, 3)
        in_frame = (xb >= margin_b) & (xb <= W - margin_b) & (yb >= margin_b) & (yb <= H - margin_b)
        a_front = rng.integers(0, 2, batch).astype(bool)
        if occluding:
            a_front[:] = facts.relation == "in front of"
        checks = relation_checks(xa, ya, ra[None, :], xb[:, None], yb[:, None], rb, a_front, gap)
        others = np.zeros(batch, bool)
        for rel, holds in checks.items():
            if rel != facts.relation:
                others |= holds
        ok = np.flatnonzero(checks[facts.relation] & ~others & in_frame)
        if ok.size:
            k = int(ok[0])
            angles = rng.uniform(0, 360, 2)
            za, zb = (1, 0) if a_front[k] else (0, 1)
            a = WorldObject(facts.a.shape, facts.a.colour, facts.a.size, float(xa0[k]),
                            float(ya0[k]), round(float(angles[0]), 3), za)
            b = WorldObject(facts.b.shape, facts.b.colour, facts.b.size, float(xb[k]),
                            float(yb[k]), round(float(angles[1]), 3), zb)
            return a, b
    raise RuntimeError(f"no placement found for {render(facts)!r} at {W}x{H}, {T} frames after {tries * batch} "
                       "tries; use a larger frame")


def sample_scene(seed: int, split: str, index: int, config: WorldConfig = WorldConfig()) -> Scene:
    """Scene `index` of `split` in the world of `seed` (deterministic in these three numbers and `config`)."""
    seed = check_seed(seed)
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    index = check_seed(index, "index")
    rng = _rng(seed, split, index)
    facts = sample_facts(rng)
    a, b = place(facts, config, rng)
    return Scene(scene_id(seed, split, index), split, seed, index, config.width, config.height, config.n_frames,
                 config.fps, (a, b), (facts.e1, facts.e2), facts.relation)
