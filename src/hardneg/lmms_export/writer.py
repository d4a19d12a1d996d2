"""Write lmms-eval task folders for hardneg's benchmarks (`hardneg export lmms-eval DIR`).

What a benchmark can be exported as is read from its declaration, never from its name: every protocol set whose
protocol is generate-match gives a `generate_until` task; every multiple-choice benchmark gives a caption-likelihood
task (lmms-eval's `multiple_choice` output type: one `loglikelihood` request per caption, for models that implement
it). Retrieval benchmarks (FIRE) rank videos per query, which lmms-eval's per-document requests cannot express: they
are listed as skipped.

Task names: `hardneg_<benchmark>[_<config>][_<suffix>]`; the first generate-match set (lmms-eval's, else the
authors', else the default) has no suffix, the others `_<set>`; caption likelihood `_likelihood` (no suffix when the
benchmark has no generate-match). A benchmark scored on several configs also gets a group `hardneg_<benchmark>`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from hardneg.lmms_export.task import OUTPUT_TYPES, SPEC_FILE, TaskSpec

UTILS = '''"""lmms-eval task written by `hardneg export lmms-eval`: hardneg builds the request and scores the answers
(hardneg.lmms_export.task); the settings are in hardneg_task.json beside this file."""

from pathlib import Path

from hardneg.lmms_export.task import BoundTask

_TASK = BoundTask(Path(__file__).resolve().parent)
doc_to_visual = _TASK.doc_to_visual
doc_to_text = _TASK.doc_to_text
doc_to_choice = _TASK.doc_to_choice
doc_to_target = _TASK.doc_to_target
process_results = _TASK.process_results
aggregate = _TASK.aggregate
'''
#: the protocol sets in the order the un-suffixed generate-match task is chosen
SET_ORDER = ("lmms-eval", "authors", "default")


@dataclass(frozen=True)
class ExportedTask:
    name: str
    spec: TaskSpec
    group: str | None


def protocols(declaration) -> list[tuple[str, str, str]]:
    """(suffix, protocol set, protocol) the benchmark can be exported as, from its declaration."""
    if declaration.is_retrieval:
        return []
    out: list[tuple[str, str, str]] = []
    seen: list = []
    for s in SET_ORDER:
        vlm = declaration.vlm_for(s)
        if vlm.protocol == "generate-match" and (s == "default" or s in dict(declaration.vlm_sets)) and vlm not in seen:
            seen.append(vlm)
            out.append(("" if not out else f"_{s.replace('-', '_')}", s, "generate-match"))
    out.append(("_likelihood" if out else "", "default", "caption-likelihood"))
    return out


def configs_for(declaration, dataset: str, configs: list[str] | None) -> list[str]:
    """The configs exported: those given, else the headline's parts among the built folder's configs."""
    if configs:
        return list(configs)
    from hardneg.items import scoreable_configs

    if Path(dataset).is_dir():
        available = scoreable_configs(dataset, declaration.name)
    else:
        available = list(declaration.overall.configs) if declaration.overall else []
    parts = declaration.overall.parts(available) if declaration.overall else available
    if not parts:
        raise ValueError(f"{declaration.name}: cannot tell which configs to export from {dataset}; pass "
                         f"--config {declaration.name}=CONFIG")
    return parts


def plan(datasets: dict[str, str], videos: dict[str, str], configs: dict[str, list[str]] | None = None,
         split: str = "test", ties: str = "expected", n_resamples: int = 1000, seed: int = 0) -> list[ExportedTask]:
    from hardneg import benchmarks

    tasks: list[ExportedTask] = []
    for name, dataset in datasets.items():
        decl = benchmarks.get(name)
        if name not in videos:
            raise ValueError(f"--videos: no video folder for {name}; pass --videos {name}=DIR")
        from hardneg.items import is_hub_id

        if not Path(dataset).is_dir() and not is_hub_id(str(dataset)):
            raise FileNotFoundError(f"--data: {dataset} (for {name}) is neither a built folder nor a Hub dataset id; "
                                    f"build it with hardneg build {name} or name its Hub repo")
        if not Path(videos[name]).is_dir():
            raise FileNotFoundError(f"--videos: {videos[name]} (for {name}) is not a folder of <video_id>.mp4 files")
        parts = configs_for(decl, dataset, (configs or {}).get(name))
        for config in parts:
            for suffix, pset, protocol in protocols(decl):
                task = f"hardneg_{name}" + (f"_{config}" if len(parts) > 1 else "") + suffix
                task = task.replace("-", "_")
                # absolute paths: the task runs from any folder (`lmms-eval` started elsewhere)
                where = str(Path(dataset).resolve()) if Path(dataset).is_dir() else str(dataset)
                tasks.append(ExportedTask(task, TaskSpec(
                    task, name, where, config, split, str(Path(videos[name]).resolve()), pset, protocol, ties,
                    n_resamples, seed), f"hardneg_{name}" if len(parts) > 1 and not suffix else None))
    return tasks


def _yaml(t: ExportedTask) -> dict:
    s = t.spec
    local = Path(s.dataset).is_dir()
    doc = {"task": t.name, "dataset_path": str(Path(s.dataset).resolve()) if local else s.dataset,
           "dataset_name": s.config, "test_split": s.split, "output_type": OUTPUT_TYPES[s.protocol],
           "doc_to_visual": "!function utils.doc_to_visual", "doc_to_text": "!function utils.doc_to_text",
           "doc_to_target": "!function utils.doc_to_target", "process_results": "!function utils.process_results"}
    if s.protocol == "caption-likelihood":
        doc["doc_to_choice"] = "!function utils.doc_to_choice"
        doc["target_delimiter"] = ""  # the caption is the whole continuation (the assistant's answer)
    if s.protocol == "generate-match":
        from hardneg import benchmarks

        vlm = benchmarks.get(s.benchmark).vlm_for(s.protocol_set)
        doc["generation_kwargs"] = {"max_new_tokens": vlm.max_new_tokens, "do_sample": False,
                                    "until": list(vlm.answers.stop) or ["\n\n"]}
    from hardneg.lmms_export.task import BoundTask  # noqa: F401  (the utils import it)
    from hardneg import benchmarks

    key = benchmarks.get(s.benchmark).headline_for(s.config)[0]
    doc["metric_list"] = [{"metric": f"hardneg_{key}", "aggregation": "!function utils.aggregate",
                           "higher_is_better": True}]
    doc["metadata"] = {"version": 1, "hardneg_protocol_set": s.protocol_set, "hardneg_protocol": s.protocol}
    if s.protocol == "caption-likelihood":  # said where a user of the task sees it (docs/models.md, "Limits")
        doc["metadata"]["hardneg_reproduces_run"] = "with --model hardneg_vlm only"
        doc["metadata"]["hardneg_note"] = (
            "run it with --model hardneg_vlm (installed with hardneg): its loglikelihood is hardneg's caption "
            "likelihood (the mean log-probability per caption token), so the numbers are hardneg run's; another "
            "model's loglikelihood is lmms-eval's sum over the caption's tokens, so not hardneg run's, and none of "
            "lmms-eval 0.7.3's video wrappers takes a video there (its Qwen-VL wrappers raise NotImplementedError)")
    return doc


def _dump(doc: dict) -> str:
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    # lmms-eval's loader resolves `!function module.name` tags; safe_dump quotes them as strings
    return text.replace("'!function ", "!function ").replace("utils.doc_to_visual'", "utils.doc_to_visual") \
        .replace("utils.doc_to_text'", "utils.doc_to_text").replace("utils.doc_to_target'", "utils.doc_to_target") \
        .replace("utils.process_results'", "utils.process_results").replace("utils.aggregate'", "utils.aggregate") \
        .replace("utils.doc_to_choice'", "utils.doc_to_choice")


def write(out: str | Path, tasks: list[ExportedTask], overwrite: bool = False) -> list[Path]:
    """One folder per task (YAML, utils.py, hardneg_task.json) and one YAML per group; refuses an existing DIR that
    holds files unless `overwrite`."""
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise FileExistsError(f"{out} exists and is not empty; pass --overwrite or name a new folder")
    written = []
    for t in tasks:
        folder = out / t.name
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in ((SPEC_FILE, t.spec.to_json()), ("utils.py", UTILS), (f"{t.name}.yaml", _dump(_yaml(t)))):
            tmp = folder / f".{name}.tmp"
            tmp.write_text(text)
            os.replace(tmp, folder / name)
        written.append(folder / f"{t.name}.yaml")
    groups: dict[str, list[str]] = {}
    for t in tasks:
        if t.group:
            groups.setdefault(t.group, []).append(t.name)
    for g, names in groups.items():
        path = out / f"{g}.yaml"
        path.write_text(yaml.safe_dump({"group": g, "task": names}, sort_keys=False))
        written.append(path)
    return written
