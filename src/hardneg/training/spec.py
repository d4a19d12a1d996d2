"""`TrainSpec`: every setting of one training run, as one frozen object.

`hardneg.train(...)` builds one from its keywords, `hardneg train` from its flags (`cli/train.py`,
`spec_from_args`), and `hardneg.training.trainer.run_training(spec)` runs it. A new training setting
is one field here (with its check in `__post_init__`), one flag in `cli/train.py`'s parser and
`spec_from_args`, and a line in docs/training.md; when it changes the weights, it also goes in
`TrainSettings` (the part a resume must match), which changes the run's settings key.

`TrainSettings` is what a run records (in `trainer_state.safetensors`, with its key in the
checkpoint's provenance) and what `--resume` compares: its fields and their values are those
every earlier version wrote, so older runs still resume.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hardneg.training.losses import DEFAULT_LAMBDA, DEFAULT_N
from hardneg.training.objectives import Objective, objective

DEFAULT_TEACHER = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass
class TrainSettings:
    """Everything that makes a run's result what it is (a resumed run must match it). Recorded as it is."""

    model: str = "tiny-temporal"
    data: str = ""
    videos: str | None = None
    objective: str = "coarse"
    negatives: str | None = None
    negatives_settings: dict[str, Any] = field(default_factory=dict)
    steps: int | None = None
    epochs: int = 10
    batch_size: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.01
    seed: int = 0
    lam: float = DEFAULT_LAMBDA
    n_negatives: int = DEFAULT_N
    n_frames: int = 8
    resize: int | None = None
    teacher: str = DEFAULT_TEACHER
    limit: int | None = None

    def key(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class TrainSpec:
    """One training run: what to train, on what, with which objective, and how the run behaves.

    What:   model ("tiny-temporal", built in and seeing frame order; "tiny-clip"; a CLIP Hub id or folder; a
            `hardneg train` checkpoint to continue from), data (a built benchmark folder with a train split, or a
            folder/file of video-caption pairs), videos (their folder; default <data>/videos or <data>),
            out (the checkpoint folder to write).
    Objective: objective (`hardneg.training.objectives`), negatives (a generator run on the fly, default the
            objective's, or a Parquet file of generator output), negatives_settings (the generator's settings,
            kept as (key, value) pairs in the order given, so the object stays frozen; a mapping is accepted),
            lam and n_negatives (Eq. 4's lambda and N per part of speech or category), teacher (Eq. 2's
            sentence-embedding model; recorded only for llm-lgt).
    Length and optimiser: steps (or epochs over the data), batch_size, lr, weight_decay, seed (everything random),
            limit (the first N pairs only).
    Frames: n_frames, resize (shorter side; default 64 for tiny-temporal and `hardneg train` checkpoints).
    Run:    save_every (steps between checkpoints), resume / overwrite (continue the run in `out`, or replace it;
            a folder with another run is refused without one), device ("cpu", "cuda"; default a GPU when visible,
            where bfloat16 autocast runs), compile (torch.compile on a GPU; None: there by default), progress.

    A spec is checked when built: a bad count or rate is a ValueError naming the flag and the fix."""

    model: str = "tiny-temporal"
    data: str | Path = ""
    out: str | Path = "hardneg-train"
    objective: str = "coarse"
    negatives: str | None = None
    negatives_settings: tuple[tuple[str, Any], ...] = ()
    videos: str | Path | None = None
    steps: int | None = None
    epochs: int = 10
    batch_size: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.01
    seed: int = 0
    lam: float = DEFAULT_LAMBDA
    n_negatives: int = DEFAULT_N
    n_frames: int = 8
    resize: int | None = None
    teacher: str = DEFAULT_TEACHER
    limit: int | None = None
    save_every: int = 50
    resume: bool = False
    overwrite: bool = False
    device: str | None = None
    compile: bool | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        given = self.negatives_settings
        pairs = tuple((given or {}).items()) if isinstance(given, Mapping) or given is None else tuple(
            (str(k), v) for k, v in given)
        object.__setattr__(self, "negatives_settings", pairs)
        objective(self.objective)  # a clear error for an unknown objective
        if self.batch_size < 2:
            raise ValueError(f"batch_size must be at least 2 (L_coarse contrasts the batch), got {self.batch_size}")
        if self.steps is not None and self.steps < 1:
            raise ValueError(f"steps must be at least 1, got {self.steps}")
        self._check_counts()
        if self.objective_record.generator is None and self.negatives:
            raise ValueError("objective 'coarse' uses no negatives; drop --negatives or pick another --objective")

    def _check_counts(self) -> None:
        """The counts and rates of a run, each in its range: a ValueError names the flag, the value and the fix
        (before: --epochs 0 wrote an untrained checkpoint, --limit 0 was ignored, --save-every 0 divided by zero)."""
        at_least_one = {"epochs": "--epochs", "save_every": "--save-every", "n_negatives": "--n-negatives",
                        "limit": "--limit", "n_frames": "--frames"}
        for key, flag in at_least_one.items():
            value = getattr(self, key)
            if value is None and key == "limit":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{flag} {value!r}: must be a whole number of at least 1"
                                 + (" (leave --limit out to use every pair)" if key == "limit" else ""))
        lr, lam = self.lr, self.lam
        if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
            raise ValueError(f"--lr {lr!r}: must be a positive finite number, e.g. 1e-3")
        if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam >= 0):
            raise ValueError(f"--lam {lam!r}: must be a finite number of at least 0, e.g. 0.2")

    @property
    def objective_record(self) -> Objective:
        return objective(self.objective)

    @property
    def generator_settings(self) -> dict[str, Any]:
        """negatives_settings as the mapping the generator's factory takes."""
        return dict(self.negatives_settings)

    @property
    def negatives_source(self) -> str | None:
        """The negatives the run uses: `negatives`, else the objective's generator (None for coarse)."""
        if self.objective_record.generator is None:
            return None
        return self.negatives or self.objective_record.generator

    def settings(self) -> TrainSettings:
        """The part a resumed run must match, as every version has recorded it."""
        negatives = self.negatives_source
        return TrainSettings(model=str(self.model), data=str(self.data), videos=str(self.videos) if self.videos else None,
                             objective=self.objective, negatives=str(negatives) if negatives else None,
                             negatives_settings=self.generator_settings, steps=self.steps, epochs=self.epochs,
                             batch_size=self.batch_size, lr=self.lr, weight_decay=self.weight_decay, seed=self.seed,
                             lam=self.lam, n_negatives=self.n_negatives, n_frames=self.n_frames, resize=self.resize,
                             teacher=self.teacher if self.objective_record.extra == "logit" else "", limit=self.limit)
