"""Draw a scene's frames and write them as an H.264 video through the project's video writer.

Each shape is an implicit region in the object's own coordinates (unit = its current radius,
turned by its current angle), drawn inside the unit circle so the truth checker's radii bound
what is seen. Every object carries a dark notch off its centre, so that turning is visible on a
circle too. Pixels are the mean of 2x2 sub-pixel samples (soft edges, no aliasing of small
shapes). Objects are drawn in their drawing order (`z`); a blinking object is not drawn while
off; a fading one moves toward the background colour.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hardneg.world import vocab
from hardneg.world.motion import track

SUPERSAMPLE = 2
NOTCH = (-0.55, 0.0, 0.16)  # centre (u, v) and radius, in units of the object's radius


def shape_mask(shape: str, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Inside-test of `shape` at local coordinates (u, v) in units of the radius (u to the right, v down)."""
    rho, theta = np.hypot(u, v), np.arctan2(v, u)
    if shape == "circle":
        return rho <= 0.92
    if shape == "square":
        return np.maximum(np.abs(u), np.abs(v)) <= 0.66
    if shape == "triangle":  # a vertex toward -u, circumradius 0.92
        inside = np.ones_like(u, bool)
        for k in range(3):
            a = np.pi + k * 2 * np.pi / 3 + np.pi  # outward normal of the side facing away from vertex k
            inside &= u * np.cos(a) + v * np.sin(a) <= 0.46
        return inside
    if shape == "diamond":
        return np.abs(u) / 0.95 + np.abs(v) / 0.6 <= 1.0
    if shape == "star":  # five points, one toward -u
        return rho <= 0.4 + 0.55 * ((1 + np.cos(5 * (theta - np.pi))) / 2) ** 1.5
    if shape == "cross":
        return ((np.abs(u) <= 0.3) & (np.abs(v) <= 0.9)) | ((np.abs(v) <= 0.3) & (np.abs(u) <= 0.9))
    if shape == "heart":  # the classic sextic, point down
        x, y = u / 0.75, -v / 0.75 + 0.15
        return (x * x + y * y - 1) ** 3 - x * x * y ** 3 <= 0
    if shape == "ring":
        return (rho >= 0.5) & (rho <= 0.92)
    if shape == "hexagon":
        return (np.abs(v) <= 0.78) & (0.866 * np.abs(u) + 0.5 * np.abs(v) <= 0.78)
    if shape == "crescent":
        return (rho <= 0.92) & (np.hypot(u - 0.35, v) >= 0.7)
    raise ValueError(f"unknown shape {shape!r}; the world has {', '.join(vocab.SHAPES)}")


def render_frames(scene) -> np.ndarray:
    """(T, H, W, 3) uint8 RGB frames of `scene`."""
    tr = track(scene)
    W, H, T = scene.width, scene.height, scene.n_frames
    s = SUPERSAMPLE
    ys, xs = np.mgrid[0:H * s, 0:W * s]
    px, py = (xs + 0.5) / s, (ys + 0.5) / s  # sub-pixel centres in pixel coordinates
    bg = np.asarray(vocab.BACKGROUND, np.float64)
    order = sorted(range(len(scene.objects)), key=lambda i: scene.objects[i].z)
    frames = np.empty((T, H, W, 3), np.uint8)
    for t in range(T):
        img = np.broadcast_to(bg, (H * s, W * s, 3)).copy()
        for i in order:
            if not tr.visible[t, i]:
                continue
            obj = scene.objects[i]
            r = tr.r[t, i]
            a = np.deg2rad(tr.angle[t, i])
            dx, dy = (px - tr.x[t, i]) / r, (py - tr.y[t, i]) / r
            u, v = dx * np.cos(a) + dy * np.sin(a), -dx * np.sin(a) + dy * np.cos(a)
            body = shape_mask(obj.shape, u, v)
            colour = bg + (np.asarray(vocab.COLOURS[obj.colour], np.float64) - bg) * tr.colour_kept[t, i]
            img[body] = colour
            notch = body & (np.hypot(u - NOTCH[0], v - NOTCH[1]) <= NOTCH[2])
            img[notch] = colour * 0.35
        frames[t] = np.round(img.reshape(H, s, W, s, 3).mean(axis=(1, 3))).astype(np.uint8)
    return frames


def write_scene_video(scene, path: str | Path) -> Path:
    """Encode `scene` to `path` (H.264 in .mp4 unless the suffix says otherwise); same scene, same bytes."""
    from hardneg.video import write_video

    return write_video(path, iter(render_frames(scene)), fps=scene.fps, threads=1)
