"""Local copies of a few released TempCompass questions and VITATECS pairs, laid out for lmms-eval 0.7.3's own task
folders (its YAML and utils.py, copied unchanged but for `dataset_path`, which points at the local copy) and for
`hardneg build`. The releases ship no videos here: each item gets a synthetic clip (moving squares), the same file
for both harnesses; every third clip has a size the tiny models' processors resize twice (`ODD_SIZE`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

TEMPCOMPASS_N = 15
VITATECS_N = 12
VITATECS_ASPECT = "Direction"


#: the size of every third clip (height, width): qwen-vl-utils (factor 28, min_pixels 3136) makes its frames 56 x 84,
#: and 84 is not a multiple of the tiny models' factor (patch 4 x merge 2 = 8), so their processor resizes the frames a
#: second time (to 56 x 80), as no real Qwen checkpoint does (its factor is 14 x 2 = 28, qwen-vl-utils' own): the
#: pixels of both harnesses must still agree there (issue 48, item 6). The other clips, 48 x 64, become 56 x 56.
ODD_SIZE = (40, 60)


def _clip(path: Path, seed: int, frames: int = 16, fps: int = 8) -> None:
    from hardneg.video import write_video

    rng = np.random.default_rng(seed)
    size = ODD_SIZE if seed % 3 == 2 else (48, 64)
    base = rng.integers(0, 255, (*size, 3), dtype=np.uint8)
    out = []
    for t in range(frames):
        f = base.copy()
        x = (4 * t + seed) % 48
        f[10:26, x:x + 16] = (255, 40 * (seed % 6), 0)  # (inside both sizes)
        out.append(f)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_video(path, out, fps=fps)


def _local_task(lmms_root: Path, task: str, dest: Path, dataset: Path) -> None:
    """lmms-eval's tasks/<task> folder, copied; only `dataset_path:` of its template changed to the local copy."""
    shutil.copytree(lmms_root / "tasks" / task, dest / task)
    template = dest / task / "_default_template_yaml"
    lines = template.read_text().split("\n")
    assert sum(line.startswith("dataset_path:") for line in lines) == 1
    template.write_text("\n".join(f"dataset_path: {dataset}" if line.startswith("dataset_path:") else line
                                  for line in lines))


def _hub_folder(folder: Path, config: str, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "README.md").write_text(f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: test\n"
                                      "    path: data.jsonl\n---\n")


def prepare(realdata: Path, lmms_root: Path, work: Path) -> dict:
    """{"hf_home", "tasks_dir", "tempcompass_raw", "vitatecs_raw", "videos", "tempcompass", "vitatecs"}."""
    hf_home, tasks_dir, videos = work / "hf_home", work / "tasks", work / "videos"
    # TempCompass: the first questions of the release, in file order, with their video ids
    release = json.loads((realdata / "tempcompass" / "caption_matching.json").read_text())
    picked: dict[str, dict[str, list]] = {}
    rows = []
    for video, aspects in release.items():
        for aspect, entries in aspects.items():
            for e in entries:
                if len(rows) < TEMPCOMPASS_N:
                    picked.setdefault(video, {}).setdefault(aspect, []).append(e)
                    rows.append({"video_id": video, "question": e["question"], "answer": e["answer"], "dim": aspect})
    meta = json.loads((realdata / "tempcompass" / "meta_info.json").read_text())
    tc_raw = work / "raw" / "tempcompass"
    tc_raw.mkdir(parents=True)
    (tc_raw / "caption_matching.json").write_text(json.dumps(picked))
    (tc_raw / "meta_info.json").write_text(json.dumps({v: meta[v] for v in picked}))
    _hub_folder(work / "datasets" / "tempcompass", "caption_matching", rows)
    _local_task(lmms_root, "tempcompass", tasks_dir, work / "datasets" / "tempcompass")
    for k, video in enumerate(picked):
        _clip(hf_home / "tempcompass" / "videos" / f"{video}.mp4", k)
        (videos).mkdir(parents=True, exist_ok=True)
        shutil.copy(hf_home / "tempcompass" / "videos" / f"{video}.mp4", videos / f"{video}.mp4")
    # VITATECS: the first pairs of one aspect file
    lines = (realdata / "vitatecs" / f"{VITATECS_ASPECT}.jsonl").read_text().split("\n")[:VITATECS_N]
    pairs = [json.loads(line) for line in lines]
    vt_raw = work / "raw" / "vitatecs"
    vt_raw.mkdir(parents=True)
    (vt_raw / f"{VITATECS_ASPECT}.jsonl").write_text("\n".join(lines) + "\n")
    _hub_folder(work / "datasets" / "vitatecs", VITATECS_ASPECT, pairs)
    _local_task(lmms_root, "vitatecs", tasks_dir, work / "datasets" / "vitatecs")
    for k, p in enumerate(pairs):
        path = hf_home / "vitatecs" / p["src_dataset"] / p["video_name"]
        if not path.exists():
            _clip(path, 100 + k)
        shutil.copy(path, videos / p["video_name"])
    return {"hf_home": hf_home, "tasks_dir": tasks_dir, "tempcompass_raw": tc_raw, "vitatecs_raw": vt_raw,
            "videos": videos, "tempcompass": rows, "vitatecs": pairs}
