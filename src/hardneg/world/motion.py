"""Where every object is in every frame (the kinematics), and which relations hold: the ground truth.

The renderer draws from `track` and the truth checker reads `relations` from it, so a caption is
judged on exactly what the video shows. The subject (object 0) performs the scene's events, one
per equal part of the video, in order; each event starts where the previous one ended (position,
size, angle, colour). The other object does not move.

Relations of the subject A to the other object B, with y pointing down and r the current radius
(a gap g of S/64 keeps touching objects apart), must hold in EVERY frame, except the two
occlusion relations, which need one frame of overlap:
    above:       yB - yA > |xB - xA|  and  yB - yA >= rA + rB + g
    below:       yA - yB > |xB - xA|  and  yA - yB >= rA + rB + g
    beside:      |xB - xA| >= |yB - yA|  and  |xB - xA| >= rA + rB + g
    in front of: distance <= rA + rB - g in some frame, and A is drawn over B
    behind:      distance <= rA + rB - g in some frame, and B is drawn over A
They exclude each other: the first three keep the objects apart in every frame, the cones of
the first three do not intersect, and the drawing order decides the last two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hardneg.world import vocab


@dataclass
class Track:
    """Per frame (T) and object (2): centre x, y, radius, angle (degrees), visibility, colour kept (1 = full)."""

    x: np.ndarray
    y: np.ndarray
    r: np.ndarray
    angle: np.ndarray
    visible: np.ndarray
    colour_kept: np.ndarray


def event_frames(n_frames: int, n_events: int = 2) -> list[tuple[int, int]]:
    """[start, end) frames of each event: equal consecutive parts of the video."""
    bounds = [round(i * n_frames / n_events) for i in range(n_events + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def progress(n_frames: int, start: int, end: int) -> np.ndarray:
    """(T,) how far an event spanning [start, end) has got at each frame: 0 before it, 1 at its last frame and after."""
    t = np.arange(n_frames, dtype=np.float64)
    return np.clip((t - start + 1) / (end - start), 0.0, 1.0)


def subject_offsets(events, n_frames: int, side: float) -> dict[str, np.ndarray]:
    """(T,) arrays relative to the subject's first frame: dx, dy, scale, dangle, visible, colour_kept.

    `events` are (verb, manner, direction) triples, `side` the frame's shorter side in pixels.
    """
    T = n_frames
    dx, dy = np.zeros(T), np.zeros(T)
    log_scale, dangle = np.zeros(T), np.zeros(T)
    visible, kept = np.ones(T, bool), np.ones(T)
    for (verb, manner, direction), (s, e) in zip(events, event_frames(T, len(events))):
        p = progress(T, s, e)
        inside = (np.arange(T) >= s) & (np.arange(T) < e)
        cyc = vocab.CYCLES[manner]
        wave = np.where(inside, np.sin(2 * math.pi * vocab.SWING_CYCLES[manner] * p), 0.0)
        if verb == "moves":
            ux, uy = vocab.DIRECTIONS[direction]
            dist = vocab.MOVE_DISTANCE[manner] * side * p
            dx, dy = dx + ux * dist, dy + uy * dist
        elif verb == "rotates":
            dangle = dangle + vocab.ROTATE_DEGREES[manner] * p
        elif verb == "grows":
            log_scale = log_scale + math.log(vocab.GROW_FACTOR[manner]) * p
        elif verb == "shrinks":
            log_scale = log_scale - math.log(vocab.GROW_FACTOR[manner]) * p
        elif verb == "fades":
            kept = kept * (1.0 - vocab.FADE_SHARE[manner] * p)
        elif verb == "bounces":
            dy = dy - vocab.BOUNCE_HEIGHT * side * np.where(inside, np.abs(np.sin(math.pi * cyc * p)), 0.0)
        elif verb == "shakes":
            dx = dx + vocab.SHAKE_AMPLITUDE * side * wave
        elif verb == "pulses":
            log_scale = log_scale + np.log1p(vocab.PULSE_AMPLITUDE * np.where(inside, np.sin(math.pi * cyc * p) ** 2, 0.0))
        elif verb == "wobbles":
            dangle = dangle + vocab.WOBBLE_DEGREES * wave
        elif verb == "blinks":
            visible = visible & ~(inside & ((cyc * p) % 1.0 >= 0.5))
        else:
            raise ValueError(f"unknown action {verb!r}; the world has {', '.join(vocab.ACTIONS)}")
    return {"dx": dx, "dy": dy, "scale": np.exp(log_scale), "dangle": dangle, "visible": visible, "colour_kept": kept}


def track(scene) -> Track:
    """Every object's state in every frame of `scene` (a `hardneg.world.scene.Scene`)."""
    T, side = scene.n_frames, scene.side
    off = subject_offsets([(e.verb, e.manner, e.direction) for e in scene.events], T, side)
    a, b = scene.objects
    ra, rb = vocab.SIZES[a.size] * side, vocab.SIZES[b.size] * side
    return Track(
        x=np.stack([a.x + off["dx"], np.full(T, b.x)], axis=1),
        y=np.stack([a.y + off["dy"], np.full(T, b.y)], axis=1),
        r=np.stack([ra * off["scale"], np.full(T, rb)], axis=1),
        angle=np.stack([a.angle + off["dangle"], np.full(T, b.angle)], axis=1),
        visible=np.stack([off["visible"], np.ones(T, bool)], axis=1),
        colour_kept=np.stack([off["colour_kept"], np.ones(T)], axis=1),
    )


def relation_checks(xa, ya, ra, xb, yb, rb, a_in_front: bool, gap: float) -> dict[str, bool]:
    """Which relations of A to B hold, given (T,) or (N, T) trajectories (see the module docstring)."""
    dx, dy = xb - xa, yb - ya  # B relative to A; dy > 0: B is lower, A above
    apart = ra + rb + gap
    overlap = np.hypot(dx, dy) <= ra + rb - gap
    return {
        "above": np.all((dy > np.abs(dx)) & (dy >= apart), axis=-1),
        "below": np.all((-dy > np.abs(dx)) & (-dy >= apart), axis=-1),
        "beside": np.all((np.abs(dx) >= np.abs(dy)) & (np.abs(dx) >= apart), axis=-1),
        "in front of": np.any(overlap, axis=-1) & a_in_front,
        "behind": np.any(overlap, axis=-1) & (not a_in_front if isinstance(a_in_front, bool) else ~a_in_front),
    }


def relations(scene) -> set[str]:
    """The relations of the subject to the other object that hold in `scene`."""
    tr = track(scene)
    a, b = scene.objects
    checks = relation_checks(tr.x[:, 0], tr.y[:, 0], tr.r[:, 0], tr.x[:, 1], tr.y[:, 1], tr.r[:, 1],
                             a.z > b.z, scene.side / 64)
    return {k for k, v in checks.items() if bool(v)}
