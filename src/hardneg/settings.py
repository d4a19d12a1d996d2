"""The settings that travel through a run, as a few frozen, documented objects.

Why: a setting threaded by hand through the CLI, the Python API, the Ray runner, the Spaces and the leaderboard's
recompute is a setting one of them forgets. These objects are what travels instead; each public entry point
(`hardneg.run_model`, `hardneg.scoring.score_benchmark`, `hardneg.results.evaluate_scores`, `hardneg.runner.run_map`)
keeps its keyword names and folds them into the objects with `from_keywords`, so user code does not change.

* `ModelSpec`: which model and how it is loaded and prompted (id or object, revision, device, dtype, protocol, ...).
* `hardneg.video.FrameSettings`: how frames are taken (it lives with the decoder; processor kwargs are part of it).
* `Execution`: where the batches run (batch size, local/Ray backend, workers, GPUs, progress bar).
* `EvalSettings`: how scores become metrics (tie rule, bootstrap resamples, confidence, seed).
* `ScoreJob`: one benchmark config to score into one predictions file (data, videos, cache, overwrite).
* `RunSpec`: a `run_model` run over benchmarks (data, videos, out folder, cache, charts, evaluation).

A new setting goes in the object it belongs to (a field with a default and a line of doc), in the CLI's one builder
(`hardneg.cli.model_flags.model_spec`, `execution` ...) and, where it changes the scores, in the identity that keys
resumes and caches. `results.json` records the objects (`run.settings`); `recorded_settings` reads them back.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from hardneg.settings_keywords import from_keywords, refuse_unknown
from hardneg.video import FrameSettings


@dataclass(frozen=True)
class ModelSpec:
    """Which model, and how it is loaded and how a video LLM is asked.

    model: a name or Hub id for `hardneg.models.load_model`, a local folder, or a Python object
        (`hardneg.models.protocol.as_model`: a VideoTextModel, an encode_video/encode_text or score object, a function).
    device: "cpu", "cuda", "cuda:1", or a placement string (`map:auto|...`); None: cuda when available.
    fp16: half precision on the GPU (the dtype).
    revision: the Hub revision (commit, tag or branch) a named model is loaded at.
    protocol, prompt, protocol_set: how a video LLM scores captions, over each benchmark's declared protocol
        (prompt: one string, or {benchmark name: prompt}); docs/models.md.
    model_id: the name written into the predictions and results (`ORG/NAME`); None: the model's own.
    judge: a causal LM (Hub id or folder) or a callable that decides generated answers a rule cannot (generate-match).
    Processor keyword arguments travel in `FrameSettings.processor` (they change the frames a model sees).
    """

    model: Any
    device: str | None = None
    fp16: bool = False
    revision: str | None = None
    protocol: str | None = None
    prompt: Any = None
    protocol_set: str | None = None
    model_id: str | None = None
    judge: Any = None

    def load(self):
        """The `VideoTextModel` for `model` (loaded when it is a name; wrapped when it is an object), with `judge`."""
        from hardneg.models.protocol import as_model

        m = as_model(self.model, device=self.device, fp16=self.fp16, revision=self.revision)
        if self.judge is not None:  # a causal LM for the undecided generate-match answers (hardneg.judges)
            if not hasattr(m, "judge"):
                raise ValueError("--judge applies to video LLMs (protocol generate-match); this model generates "
                                 "nothing")
            judge = self.judge
            if isinstance(judge, (str, Path)):
                from hardneg.judges import LLMJudge

                judge = LLMJudge(str(judge), device=self.device)
            m.judge = judge
        return m

    def how_asked(self) -> tuple[Any, Any, Any]:
        """(protocol, prompt, protocol_set): what `hardneg.models.prompting.bind_protocol` takes."""
        return self.protocol, self.prompt, self.protocol_set

    def record(self) -> dict[str, Any]:
        """JSON for results.json: the settings as given (an object model is recorded by its type's name, a callable
        judge as null: neither can be read back)."""
        named = isinstance(self.model, (str, Path))
        return {"model": str(self.model) if named else None,
                "model_object": None if named else type(self.model).__name__,
                "device": self.device, "fp16": self.fp16, "revision": self.revision, "protocol": self.protocol,
                "prompt": self.prompt, "protocol_set": self.protocol_set, "model_id": self.model_id,
                "judge": str(self.judge) if isinstance(self.judge, (str, Path)) else None}

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> ModelSpec:
        """The spec `record()` wrote (a model given as an object comes back as None: give it again)."""
        return cls(model=rec.get("model"), **{f.name: rec[f.name] for f in fields(cls) if f.name != "model" and f.name in rec})


@dataclass(frozen=True)
class Execution:
    """Where and how the batches of a map run (`hardneg.runner.run_map`).

    batch_size: rows per shard (a shard's bytes do not depend on the backend or the worker count).
    backend: "local" (this process, or a pool of `num_workers` processes) or "ray".
    num_workers: processes (local) or actors (Ray); a model given as a Python object runs in this process only.
    ray_address, num_gpus, ray_runtime_env: the Ray cluster, GPUs per actor and runtime environment (Ray only).
    progress: a progress bar over the rows.
    """

    batch_size: int = 64
    backend: str = "local"
    num_workers: int = 1
    ray_address: str | None = None
    num_gpus: float = 0
    ray_runtime_env: dict | None = field(default=None, hash=False)
    progress: bool = True

    @property
    def same_process(self) -> bool:
        """Everything runs here: a loaded model (or a Python object) can be used as it is."""
        return self.backend == "local" and self.num_workers == 1

    def record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class EvalSettings:
    """How scores become metrics (`hardneg evaluate`).

    ties: the tie rule (`hardneg.ranking.ties.TIE_RULES`; "expected" by default).
    n_resamples: bootstrap resamples for the intervals (0: no intervals). confidence: their level. seed: their seed
    (and the "random" tie rule's).
    """

    ties: str = "expected"
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0

    def record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ScoreJob:
    """One benchmark config scored into one predictions file (`hardneg.scoring.score_benchmark`).

    dataset: a built folder or Hub id; config, splits: what of it is scored; out: the predictions Parquet.
    videos: folder of `<video_id>.mp4` (None for text-only models). benchmark: the declaration, when the folder does
    not say. data_revision: the dataset's Hub revision. cache_dir: embedding cache (None: `$HARDNEG_CACHE`).
    overwrite: replace an existing file.
    """

    dataset: str
    config: str
    out: str | Path
    splits: tuple[str, ...] | list[str] | None = None
    videos: str | None = None
    benchmark: str | None = None
    data_revision: str | None = None
    cache_dir: str | None = None
    overwrite: bool = False


@dataclass(frozen=True)
class RunSpec:
    """A `hardneg.run_model` run: what is scored, from where, into where, and how it is evaluated.

    benchmarks: "all", "a,b" or a list of declared names. data: built folders (None: the built-in samples).
    videos: folder of videos named by id. out: the work folder (predictions/, results.json, charts).
    cache_dir: embedding and sample-video cache. overwrite: replace another model's predictions.
    charts: a PNG chart per config. progress: a bar over (benchmark, config) pairs. evaluation: `EvalSettings`.
    """

    benchmarks: Any = "all"
    data: str | Path | None = None
    videos: str | Path | None = None
    out: str | Path = "hardneg-run"
    cache_dir: str | Path | None = None
    overwrite: bool = False
    charts: bool = False
    progress: bool = False
    evaluation: EvalSettings = EvalSettings()


def settings_record(spec: ModelSpec, frames: FrameSettings, evaluation: EvalSettings,
                    execution: Execution) -> dict[str, Any]:
    """What results.json records under `run.settings`: the objects as they were given."""
    return {"model": spec.record(), "frames": frames_record(frames), "evaluation": evaluation.record(),
            "execution": execution.record()}


def frames_record(frames: FrameSettings) -> dict[str, Any]:
    """Every field of the frame settings (processor kwargs as a dict), JSON-safe."""
    rec = dataclasses.asdict(frames)
    rec["processor"] = frames.processor_kwargs()
    rec["pixels"] = list(frames.pixels) if frames.pixels is not None else None
    return rec


@dataclass(frozen=True)
class RecordedSettings:
    """The settings one result of results.json was made with (`recorded_settings`)."""

    model: ModelSpec
    frames: FrameSettings
    evaluation: EvalSettings
    execution: Execution


def recorded_settings(results_path: str | Path) -> dict[str, RecordedSettings]:
    """{"benchmark/config": the settings} recorded in a results.json (`run.settings`); results written before
    settings were recorded are left out."""
    data = json.loads(Path(results_path).read_text(encoding="utf-8"))
    out: dict[str, RecordedSettings] = {}
    for key, result in data.items():
        rec = (result.get("run") or {}).get("settings") if isinstance(result, dict) else None
        if not isinstance(rec, dict):
            continue
        frames = dict(rec["frames"])
        if frames.get("pixels") is not None:
            frames["pixels"] = tuple(frames["pixels"])
        out[key] = RecordedSettings(ModelSpec.from_record(rec["model"]), FrameSettings(**frames),
                                    EvalSettings(**rec["evaluation"]), Execution(**rec["execution"]))
    return out


__all__ = ["EvalSettings", "Execution", "FrameSettings", "ModelSpec", "RecordedSettings", "RunSpec", "ScoreJob",
           "from_keywords", "recorded_settings", "refuse_unknown", "settings_record"]
