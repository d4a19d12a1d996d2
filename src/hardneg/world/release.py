"""A world on disk (the raw release `hardneg build world` reads): write one, read one back, checked.

    <folder>/world.json      settings: seed, frame size and length, scene counts, world version
    <folder>/scenes.jsonl    one scene per line (`Scene.to_dict`): id, split, objects, events,
                             relation, caption, ...; train scenes first, then test
    <folder>/videos/<id>.mp4 the scene's video, H.264

`generate_world` is resumable: it works in `.<folder>.partial` next to the output, keeps every
video already written there for the same settings, and moves the finished world into place in
one step (an existing folder is replaced only with `overwrite=True`). The scenes are sampled and
their videos written by a pool of processes (`hardneg.pool`, one per available core by default,
started first so their imports overlap the setup): each video is written
whole (a temporary file, then a rename) by `write_scene_video` with one encoder thread, so the
bytes do not depend on the process or the worker count, and the world appears only once every
video is there: a build killed at any moment never looks complete. `load_scenes` checks every
line and names the file, line, field and fix of the first problem (`RawFormatError`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

from hardneg.world import vocab
from hardneg.world.grammar import Event, Ungrammatical, parse, well_formed_problem
from hardneg.world.scene import (SPLITS, WORLD_VERSION, Scene, WorldConfig, WorldObject, check_seed, sample_scene,
                                 scene_id)

MANIFEST, SCENES, VIDEOS = "world.json", "scenes.jsonl", "videos"
OBJECT_FIELDS = {"shape": str, "colour": str, "size": str, "x": float, "y": float, "angle": float, "z": int}
SCENE_FIELDS = {"id": str, "split": str, "seed": int, "index": int, "width": int, "height": int, "n_frames": int,
                "fps": int, "objects": list, "events": list, "relation": str, "caption": str, "world_version": str}


def video_path(folder: str | Path, scene_id: str) -> Path:
    """Where the video of `scene_id` lies in a world folder."""
    return Path(folder) / VIDEOS / f"{scene_id}.mp4"


def _manifest(seed: int, config: WorldConfig, n_train: int, n_test: int) -> dict[str, Any]:
    from hardneg import __version__

    return {"world_version": WORLD_VERSION, "seed": seed, "width": config.width, "height": config.height,
            "n_frames": config.n_frames, "fps": config.fps, "n_train": n_train, "n_test": n_test,
            "made_by": f"video-hardneg {__version__} (hardneg.world.generate_world)"}


def _scene_task(arg) -> str:
    """One scene in a pool worker (or in this process): sampled here, its video written atomically if missing,
    its scenes.jsonl line returned. Same bytes anywhere: the scene depends only on (seed, split, index, config),
    the video only on the scene."""
    from hardneg.world.draw import write_scene_video

    seed, split, index, config, folder = arg
    scene = sample_scene(seed, split, index, config)
    path = video_path(folder, scene.id)
    if not path.is_file():  # a file that is there is whole (atomic writes): a resumed build keeps it
        write_scene_video(scene, str(path))
    return json.dumps(scene.to_dict(), sort_keys=True) + "\n"


def _pool_for(n_scenes: int, workers: int | None):
    """The pool of writing processes, started at once (each imports the encoder while this process goes on), or
    None for a build in this process (one worker, one scene, or Windows: the pool's workers need pass_fds)."""
    from hardneg.pool import WorkerPool, default_workers

    n = min(n_scenes, int(workers or default_workers()))
    if n <= 1 or os.name == "nt":
        return None
    return WorkerPool(n, name="hardneg-world", preload=("hardneg.world.release", "hardneg.world.draw", "av")).start()


def _write_scenes(tasks: list[tuple], pool, bar) -> list[str]:
    """The scenes.jsonl lines of `tasks`, in order, their videos written (by the pool when given).

    Why the workers sample the scenes too (issue 35): sampling every scene in this process before the first
    video was serial work (about 1 ms a scene, 1 s for 1000) that 16 workers waited on, and so was encoding
    the scenes' JSON lines after the last video; the pool also started only after it. Now the pool starts
    first and this process only hands out (seed, split, index) and collects lines."""
    from hardneg.pool import PoolError

    results = map(_scene_task, tasks) if pool is None else \
        pool.imap(_scene_task, tasks, describe=lambda a: f"scene {a[1]} {a[2]}")
    lines = []
    for got in results:
        if isinstance(got, BaseException):  # an `error:` line (PoolError), not a traceback (issue 36 N6)
            raise PoolError(f"writing the world's videos failed: {got}; rerun the same command to "
                               "resume (videos already written are kept)") from got
        lines.append(got)
        if bar is not None:
            bar.update(1)
    return lines


def generate_world(out: str | Path, n_train: int = 1000, n_test: int = 200, seed: int = 0,
                   config: WorldConfig = WorldConfig(), overwrite: bool = False, progress: bool = False,
                   workers: int | None = None) -> Path:
    """Write a world of `n_train` + `n_test` scenes with their captions and videos to `out`; return `out`.

    Deterministic: the same seed and config give the same scenes.jsonl bytes and the same video
    bytes, whatever `workers` (processes writing videos; default: the available cores, or
    $HARDNEG_DECODE_WORKERS; 1 writes them in this process). Scene i of a split does not depend on
    how many scenes are asked for.
    """
    from hardneg.io import refuse_overwrite

    seed = check_seed(seed)
    for name, n in (("n_train", n_train), ("n_test", n_test)):
        check_seed(n, name)
    if n_train + n_test < 1:
        raise ValueError("a world needs at least one scene: pass n_train and/or n_test > 0")
    if not isinstance(config, WorldConfig):
        raise ValueError(f"config must be a hardneg.world.WorldConfig, got {type(config).__name__}")
    out = Path(out)
    refuse_overwrite(out, overwrite)
    pool = _pool_for(n_train + n_test, workers)  # its workers start while this process prepares the folder
    try:
        return _generate(out, n_train, n_test, seed, config, overwrite, progress, pool)
    finally:
        if pool is not None:
            pool.close()


def _generate(out: Path, n_train: int, n_test: int, seed: int, config: WorldConfig, overwrite: bool,
              progress: bool, pool) -> Path:
    from hardneg.io import atomic_directory, atomic_write_text

    manifest = _manifest(seed, config, n_train, n_test)
    partial = out.parent / f".{out.name}.partial"
    same = {k: v for k, v in manifest.items() if k not in ("n_train", "n_test", "made_by")}
    old = partial / MANIFEST
    if partial.exists():
        try:
            kept = json.loads(old.read_text(encoding="utf-8"))
            reusable = {k: kept.get(k) for k in same} == same
        except (OSError, ValueError):
            reusable = False
        if not reusable:
            shutil.rmtree(partial)
    (partial / VIDEOS).mkdir(parents=True, exist_ok=True)
    atomic_write_text(old, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    tasks = [(seed, split, i, config, str(partial)) for split, n in (("train", n_train), ("test", n_test))
             for i in range(n)]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), desc="world videos", unit="video")
    try:
        lines = "".join(_write_scenes(tasks, pool, bar))
    finally:
        if bar is not None:
            bar.close()
    wanted = {f"{scene_id(sd, split, i)}.mp4" for sd, split, i, _, _ in tasks}
    with atomic_directory(out, overwrite=overwrite) as tmp:
        (tmp / VIDEOS).mkdir()
        for name in sorted(wanted):
            os.replace(partial / VIDEOS / name, tmp / VIDEOS / name)
        (tmp / SCENES).write_text(lines, encoding="utf-8")
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    shutil.rmtree(partial, ignore_errors=True)
    return out


# ----------------------------------------------------------------------------- reading a world back


def _fail(path: Path, line: int, problem: str, fix: str):
    from hardneg.datasets.raw_common import RawFormatError

    return RawFormatError(path, problem, fix, line)


def _typed(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _fields(obj: Any, spec: dict[str, type], path: Path, line: int, where: str) -> None:
    if not isinstance(obj, dict):
        raise _fail(path, line, f"{where} is {type(obj).__name__}, not a JSON object",
                    f"write {where} as an object with the fields {list(spec)}")
    missing = [f for f in spec if f not in obj]
    if missing:
        raise _fail(path, line, f"{where} lacks the field(s) {missing}", f"give {where} every field of {list(spec)}; "
                    "regenerate the world with `hardneg world generate`")
    for f, kind in spec.items():
        if not _typed(obj[f], kind):
            raise _fail(path, line, f"field '{where}.{f}' is {type(obj[f]).__name__} {str(obj[f])[:40]!r}, "
                        f"not {kind.__name__}", f"write '{f}' as a JSON {kind.__name__}")


def scene_from_dict(d: Any, path: Path | str = "<scene>", line: int = 1) -> Scene:
    """A checked `Scene` from its JSON form; `RawFormatError` naming the file, line, field and fix."""
    path = Path(path)
    _fields(d, SCENE_FIELDS, path, line, "scene")
    if d["world_version"] != WORLD_VERSION:
        raise _fail(path, line, f"field 'world_version' is {d['world_version']!r}; this video-hardneg reads worlds "
                    f"of version {WORLD_VERSION}", "regenerate the world with this version (`hardneg world generate`)")
    if d["split"] not in SPLITS:
        raise _fail(path, line, f"field 'split' is {d['split']!r}", f"use one of {list(SPLITS)}")
    try:
        config = WorldConfig(d["width"], d["height"], d["n_frames"], d["fps"])
    except ValueError as exc:
        raise _fail(path, line, str(exc), "regenerate the world with valid settings") from None
    if len(d["objects"]) != 2 or len(d["events"]) != 2:
        raise _fail(path, line, f"{len(d['objects'])} objects and {len(d['events'])} events",
                    "a scene has exactly 2 objects (the subject first) and 2 events")
    objects = []
    for k, o in enumerate(d["objects"]):
        _fields(o, OBJECT_FIELDS, path, line, f"objects[{k}]")
        for f, words in (("shape", vocab.SHAPES), ("colour", vocab.COLOURS), ("size", vocab.SIZES)):
            if o[f] not in words:
                raise _fail(path, line, f"field 'objects[{k}].{f}' is {o[f][:40]!r}, not a {f} of the world",
                            f"use one of {list(words)}")
        objects.append(WorldObject(**{f: (float(o[f]) if t is float else o[f]) for f, t in OBJECT_FIELDS.items()}))
    events = []
    for k, e in enumerate(d["events"]):
        _fields(e, {"verb": str, "manner": str}, path, line, f"events[{k}]")
        direction = e.get("direction")
        if direction is not None and not isinstance(direction, str):
            raise _fail(path, line, f"field 'events[{k}].direction' is {type(direction).__name__}",
                        "write the direction as a string, or null for an action that has none")
        events.append(Event(e["verb"], e["manner"], direction))
    if d["relation"] not in vocab.RELATIONS:
        raise _fail(path, line, f"field 'relation' is {d['relation'][:40]!r}", f"use one of {list(vocab.RELATIONS)}")
    scene = Scene(d["id"], d["split"], d["seed"], d["index"], config.width, config.height, config.n_frames,
                  config.fps, tuple(objects), tuple(events), d["relation"])
    problem = well_formed_problem(scene.caption)
    if problem:
        raise _fail(path, line, f"field 'events': {problem}", "regenerate the world with `hardneg world generate`")
    try:
        stated = parse(d["caption"])
    except Ungrammatical as exc:
        raise _fail(path, line, f"field 'caption' is not a caption of the world's grammar ({exc})",
                    "regenerate the world; captions come from hardneg.world.grammar") from None
    if stated != scene.caption:
        raise _fail(path, line, f"field 'caption' {d['caption'][:80]!r} does not state the scene's objects and events",
                    "the caption must be what `objects`, `events` and `relation` say; regenerate the world")
    from hardneg.world.motion import relations

    holds = relations(scene)
    if holds != {scene.relation}:
        raise _fail(path, line, f"field 'relation' is {scene.relation!r} but the positions give {sorted(holds)}",
                    "objects' x/y were edited or damaged; regenerate the world")
    return scene


def load_scenes(folder: str | Path, splits: Iterable[str] | None = None) -> list[Scene]:
    """The checked scenes of a world folder (file order), optionally only those of `splits`."""
    from hardneg.datasets.raw_common import loads_json, read_text

    folder = Path(folder)
    path = folder / SCENES
    if not path.is_file():
        raise FileNotFoundError(f"{folder} holds no {SCENES}; make a world with `hardneg world generate OUT` "
                                "(or hardneg.world.generate_world)")
    wanted = set(splits) if splits is not None else None
    out, seen = [], {}
    for line, text in enumerate(read_text(path).splitlines(), start=1):
        if not text.strip():
            continue
        scene = scene_from_dict(loads_json(text, path, row=line, what="the line"), path, line)
        if scene.id in seen:
            raise _fail(path, line, f"field 'id' {scene.id!r} repeats line {seen[scene.id]}", "scene ids are unique")
        seen[scene.id] = line
        if wanted is None or scene.split in wanted:
            out.append(scene)
    return out
