"""What a benchmark declaration holds: the one place every fact about a benchmark is written.

A declaration (`Benchmark`) names the benchmark, its Hub repo, task kind, configs, parser,
headline metrics (each with its one display name and its chance rule), tie rules, board
columns, the papers' reported rows, card text and citation. The build CLI, scoring,
`hardneg evaluate`, the results engine, quickstart, leaderboard, demo, cards and help text
read declarations through `hardneg.benchmarks.get(name)`; none of them branches on a name.

Modelled on `ir_measures` (a measure is a small declarative object) and MTEB (a task is one
file of metadata; evaluation lives in shared code).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

TASKS = ("multiple_choice", "retrieval")

#: The chance rule every headline metric uses: the value a scorer that gives every candidate
#: the same score gets, computed exactly by the ranking core under the default tie rule
#: ("expected"). For multiple choice that is R@k = k/C, MeanR = (C+1)/2, MRR = H_C/C; for
#: retrieval it depends on how many relevant videos each query has.
CHANCE_CONSTANT_SCORER = "constant-scorer"


@dataclass(frozen=True)
class Metric:
    """One headline metric: its one display name, where its per-item values come from, how it is read.

    key: the name used everywhere (module output keys, results.json, board, README, cards, charts).
    source: the per-item value of the ranking core that is averaged (`multiple_choice` gives
        `R@k`, `rank`, `RR`; `retrieval` gives `C@k`, `AP`, `R@k`, `AP_original`, `rank_original`, ...).
    over: None for a mean over items; a column name (e.g. "category") for the unweighted mean over
        that column's groups of the per-group means (PoSRank, Eq. 1 of its paper).
    baseline: for a retrieval metric with FIRE labels, the same metric counting only the original
        single positive (results carry both; the board can show both and their difference).
    """

    key: str
    source: str
    description: str
    percent: bool = True
    higher_better: bool = True
    over: str | None = None
    chance: str = CHANCE_CONSTANT_SCORER
    baseline: "Metric | None" = None

    def format(self, value: float | None) -> str:
        """The value as people read it: percent with one decimal, else three significant decimals."""
        if value is None:
            return ""
        return f"{100 * value:.1f}" if self.percent else f"{value:.3f}" if value < 1.5 else f"{value:.2f}"


@dataclass(frozen=True)
class ReportedRow:
    """One model's numbers as a paper reports them: {(config, metric key): value}, never recomputed."""

    model: str
    source: str
    values: dict[tuple[str, str], float]


@dataclass(frozen=True)
class Benchmark:
    """Everything that is true of one benchmark. See CONTRIBUTING.md, "Add a benchmark"."""

    name: str  # identifier: CLI argument, predictions metadata, leaderboard tab key
    title: str  # short display title
    task: str  # "multiple_choice" | "retrieval"
    hub_id: str  # the Hub dataset repo
    pretty_name: str  # the dataset card's title
    paper_title: str
    paper_url: str
    citation: str  # BibTeX
    licenses: tuple[str, ...]  # Hub license ids
    license_note: str
    description: str  # what it tests (card, `hardneg list`)
    negatives: str  # how the negatives were made (card)
    limitations: str  # what the numbers cannot tell (card)
    source_datasets: tuple[str, ...]  # where the videos and captions come from (card `source_datasets`)
    parser: str  # "module:function": raw folder -> `hardneg.datasets.hub_layout.BenchmarkBuild`
    raw_files: str  # one line per expected raw file, for `hardneg build --help`
    metrics: tuple[Metric, ...]  # headline metrics, in display order
    ks: tuple[int, ...] = (1,)  # the K of R@K / C@K the engine computes
    original_ties: str = "expected"  # the paper's own tie rule (a `hardneg.ranking.TIE_RULES` name)
    original_ties_note: str = ""  # where that rule comes from (file and function of the authors' code)
    breakdowns: tuple[str, ...] = ()  # item columns results are broken down by
    sample: str = ""  # folder (relative to this package's data/samples/) of a tiny raw release
    sample_root: str = ""  # absolute folder holding `sample`, for declarations outside this package
    reported: tuple[ReportedRow, ...] = ()
    tags: tuple[str, ...] = ()
    usage_note: str = ""
    config_descriptions: dict[str, str] = field(default_factory=dict)
    #: configs that are tables beside a scoreable config (FIRE's `<name>-queries`, `<name>-videos`)
    companion_suffixes: tuple[str, ...] = ()
    order: int = 100  # position in lists, tabs and pickers (lower first)
    #: negative types its items may carry beyond the shared ones (`hardneg.schema.NEGATIVE_TYPES`)
    negative_types: tuple[str, ...] = ()
    #: the config of video-caption pairs (`hardneg.schema.PAIR_SCHEMA`) with a `train` split, for
    #: training (`hardneg.items.load_pairs`); "" when there is none. It is never scored.
    pairs_config: str = ""
    #: "module:function" writing the video of one sample video id: f(sample_dir, video_id, path);
    #: "" for the default synthetic video made from the id (`hardneg.run.sample_videos`)
    sample_video_writer: str = ""

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"benchmark {self.name!r}: task must be one of {TASKS}, got {self.task!r}")
        if ":" not in self.parser:
            raise ValueError(f"benchmark {self.name!r}: parser must be 'module:function', got {self.parser!r}")
        keys = [m.key for m in self.metrics]
        if not keys or len(set(keys)) != len(keys):
            raise ValueError(f"benchmark {self.name!r}: needs headline metrics with distinct keys, got {keys}")

    # ------------------------------------------------------------------ derived facts

    @property
    def is_retrieval(self) -> bool:
        return self.task == "retrieval"

    def metric(self, key: str) -> Metric:
        for m in self.metrics:
            if m.key == key:
                return m
        raise KeyError(f"benchmark {self.name!r} has no metric {key!r}; it has {[m.key for m in self.metrics]}")

    @property
    def headline(self) -> list[str]:
        return [m.key for m in self.metrics]

    def parse_function(self) -> Callable[[Path], Any]:
        module, _, func = self.parser.partition(":")
        return getattr(importlib.import_module(module), func)

    def sample_dir(self) -> Path:
        """The folder of this benchmark's tiny built-in raw release."""
        if not self.sample:
            raise ValueError(f"benchmark {self.name!r} declares no built-in sample")
        root = Path(self.sample_root) if self.sample_root else Path(__file__).resolve().parents[1] / "data" / "samples"
        return root / self.sample

    def is_companion(self, config: str) -> bool:
        """True for a config that only accompanies another one (FIRE's query and video tables, training pairs)."""
        return config == self.pairs_config or any(config.endswith(s) for s in self.companion_suffixes)

    def scoreable(self, configs) -> list[str]:
        return [c for c in configs if not self.is_companion(c)]

    def summary(self) -> dict[str, Any]:
        """What `hardneg list` shows."""
        return {
            "name": self.name, "title": self.title, "task": self.task, "hub_id": self.hub_id,
            "metrics": self.headline, "license": list(self.licenses), "paper": self.paper_url,
            "original_ties": self.original_ties,
        }
