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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from hardneg import vocabulary

TASKS = ("multiple_choice", "retrieval")

#: The chance rule every headline metric uses: the value a scorer that gives every candidate
#: the same score gets, computed exactly by the ranking core under the default tie rule
#: ("expected"). For multiple choice that is R@k = k/C, MeanR = (C+1)/2, MRR = H_C/C; for
#: retrieval it depends on how many relevant videos each query has.
CHANCE_CONSTANT_SCORER = "constant-scorer"


@dataclass(frozen=True)
class Metric:
    """One headline metric: its key in the results vocabulary, where its per-item values come from.

    key: a key of `hardneg.vocabulary` (module outputs, results.json, board, README, cards, charts all
        use it). Its unit, direction and range come from the vocabulary, never from the declaration: a
        key the vocabulary does not define fails here, at import, with the fix.
    source: the per-item value of the ranking core that is averaged (`multiple_choice` gives
        `R@k`, `rank`, `RR`; `retrieval` gives `C@k`, `AP`, `R@k`, `AP_original`, `rank_original`, ...).
    over: None for a mean over items; a column name (e.g. "category") for the unweighted mean over
        that column's groups of the per-group means (PoSRank, Eq. 1 of its paper).
    baseline: for a retrieval metric with FIRE labels, the same metric counting only the original
        single positive (results carry both; the board can show both and their difference).
    where: (column, value): count only the rows whose item column holds that value (ViLMA's
        `Proficiency`: the rows with `part` "proficiency"). The column is one of the declaration's
        `item_columns` or a breakdown column.
    all_of: a column whose equal values make one group of rows (ViLMA: the main and the proficiency
        row of one release item share `item_key`). Each group counts once, with the product of its
        rows' values: 1 when every row is right (ViLMA's combined score, `bin/multi_eval.py`, `main`);
        under a tie-aware rule the product is the chance that all are right, since each row's ties
        break independently. Groups are formed from the rows scored.
    description: one line saying what the metric computes on this benchmark (`hardneg list`, cards).
    configs: the configs the metric is computed on (None: every config). A metric is named by what it
        computes: the world's `PoSRank` (a mean over parts of speech) is reported on its part-of-speech
        configs only, not on its counterfactual or temporal ones (`Benchmark.metrics_for`).
    chance: how the chance value is computed (`CHANCE_CONSTANT_SCORER`: a constant scorer, exactly).
    percent, higher_better: read from the vocabulary. Older declarations may still pass them: a
        `higher_better` that contradicts the vocabulary is an error; `percent` (how to display) is
        always the vocabulary's (every fraction is shown in percent).
    """

    key: str
    source: str
    description: str
    percent: bool | None = None
    higher_better: bool | None = None
    over: str | None = None
    chance: str = CHANCE_CONSTANT_SCORER
    baseline: "Metric | None" = None
    where: tuple[str, str] | None = None
    all_of: str | None = None
    configs: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        try:
            entry = vocabulary.entry(self.key)
        except vocabulary.UnknownMetricKey as exc:
            raise ValueError(f"Metric({self.key!r}, ...) in a benchmark declaration: {exc}") from None
        if self.higher_better is not None and bool(self.higher_better) != entry.higher_better:
            raise ValueError(
                f"Metric({self.key!r}, ...): higher_better={self.higher_better} contradicts the results vocabulary "
                f"({entry.key}: {'higher' if entry.higher_better else 'lower'} is better); drop the argument")
        object.__setattr__(self, "percent", entry.percent)
        object.__setattr__(self, "higher_better", entry.higher_better)

    @property
    def unit(self) -> str:
        """'fraction' or 'rank' (hardneg.vocabulary)."""
        return vocabulary.unit(self.key)

    @property
    def header(self) -> str:
        """The column header every display uses: 'R@1 (%)', 'MeanR (rank)'."""
        return vocabulary.header(self.key)

    def format(self, value: float | None) -> str:
        """The value as people read it (`hardneg.vocabulary.display`): percent with one decimal, ranks with two."""
        return vocabulary.display(self.key, value)


#: how a benchmark's configs combine into its one number (`Headline.rule`)
HEADLINE_RULES = {
    "config": "the value on one named config that holds every item (ATP-Hard's `atp-hard`, ViLMA's `all`)",
    "mean": "the unweighted mean over named disjoint configs (each paper reports them side by side)",
    "pooled": "the mean over the items of named disjoint configs together (each config weighted by its items)",
}


@dataclass(frozen=True)
class Headline:
    """How a benchmark's configs combine into its one number (the benchmark's headline).

    `hardneg run`, results.json (under the benchmark's own key), the board's Overall and tabs, the CSVs, the
    demo and the cards all read the one value the results engine computes from this (`hardneg.headline`).

    rule: "config" (one named config holding every item), "mean" (unweighted mean over disjoint configs)
        or "pooled" (mean over the items of disjoint configs: each config weighted by its items; only for a
        metric that is a plain mean over items).
    configs: the config ("config": exactly one) or the disjoint configs ("mean", "pooled"). Empty for
        "mean"/"pooled": every scoreable config the built dataset has (a release whose configs vary).
    metric: the metric key (default: the first headline metric whose unit is a fraction).
    """

    rule: str
    configs: tuple[str, ...] = ()
    metric: str | None = None

    def __post_init__(self) -> None:
        if self.rule not in HEADLINE_RULES:
            raise ValueError(f"Headline(rule={self.rule!r}): use one of {sorted(HEADLINE_RULES)}")
        if self.rule == "config" and len(self.configs) != 1:
            raise ValueError(f"Headline(rule='config') names exactly one config, got {self.configs!r}")

    def parts(self, available) -> list[str]:
        """The configs the number is computed from, given the configs a built dataset (or board) has."""
        available = list(available)
        if self.rule == "config":
            return list(self.configs)
        # named disjoint configs: those the data has (a built-in sample may hold fewer); none named: every one
        return [c for c in self.configs if c in available] if self.configs else available

    def describe(self, available=None) -> str:
        """One line: 'Accuracy on atp-hard', 'mean of R@1 over msrvtt, vatex'."""
        parts = list(self.configs) if available is None else self.parts(available)
        shown = ", ".join(parts) if parts else "every config"
        return {"config": f"on {shown}", "mean": f"unweighted mean over {shown}",
                "pooled": f"over the items of {shown} together"}[self.rule]


class _FunctionRef:
    """A declaration field that names a function as "module:function" (`function`), imported only when used."""

    function: str

    def load(self) -> Callable[..., Any]:
        module, _, func = self.function.partition(":")
        return getattr(importlib.import_module(module), func)


@dataclass(frozen=True)
class ItemChoice(_FunctionRef):
    """Another item set a benchmark's authors evaluate on (`hardneg evaluate --items NAME`).

    name: what `--items` takes (e.g. "authors"). function: "module:function" taking the loaded
    `hardneg.items.BenchmarkData` and returning the ids of the items to keep. description: one line naming
    the authors' file and function and what it drops (printed with every result computed on it).
    """

    name: str
    function: str
    description: str


@dataclass(frozen=True)
class ReportedRow:
    """One model's numbers as a paper reports them: {(config, metric key): value}, never recomputed."""

    model: str  # the model's name as the paper writes it
    source: str  # where the numbers are (paper, table)
    values: dict[tuple[str, str], float]  # (config, metric key) -> value, fractions as fractions


@dataclass(frozen=True)
class ScoreImporter(_FunctionRef):
    """A released per-item output format that `hardneg import-scores` turns into a predictions file.

    name: what `--format` takes (e.g. "videocon-scores-csv").
    function: "module:function" taking (file path, `hardneg.items.BenchmarkData` of the chosen config)
        and returning an `ImportedScores` (below: matched scores, rows that match no item).
    description: one line for `hardneg import-scores --help` and the predictions' metadata.
    """

    name: str
    function: str
    description: str


@dataclass
class ImportedScores:
    """What a format's parser found in a released file, joined to the items of one config.

    scores: item (or query) id -> one score per candidate caption (or per video of `video_ids`),
        None where the file has no row for that candidate.
    video_ids: retrieval only: the video of each score column (the collection's order).
    unmatched: one line per row that matches no item of the config ("row 12: video 'x', ...").
    other_configs: rows that belong to items of another config of the same benchmark (not errors).
    """

    scores: dict[str, list[float | None]]
    video_ids: list[str] | None = None
    rows_read: int = 0
    unmatched: list[str] = field(default_factory=list)
    other_configs: int = 0
    notes: list[str] = field(default_factory=list)


#: How a video LLM scores a caption (`hardneg.models.vlm.model`; docs/models.md, "Video LLMs"):
#: "caption-likelihood" (mean log-probability of the caption's tokens after the prompt),
#: "yes-probability" (P(Yes) / (P(Yes) + P(No)) after a question holding the caption: VideoCon),
#: "choice-letter" (all captions listed as options A, B, ...; each scored by its letter's logit: TempCompass),
#: "generate-match" (the item's own question, a short greedy answer, the authors' rule matches it to an option)
VLM_PROTOCOLS = ("caption-likelihood", "yes-probability", "choice-letter", "generate-match")
#: where a prompt puts the video (the model's own video placeholder goes there), the caption(s), the item's question
VIDEO_SLOT, CAPTION_SLOT, OPTIONS_SLOT, QUESTION_SLOT = "{video}", "{caption}", "{options}", "{question}"
#: `hardneg run --protocol-set`: "default" (each benchmark's `vlm`), "authors" (the benchmark authors' released
#: video-LLM protocol), "lmms-eval" (lmms-eval's task for the benchmark); a benchmark without an entry for a set
#: uses its `vlm`, and the provenance says so (`Benchmark.vlm_for`)
PROTOCOL_SETS = ("default", "authors", "lmms-eval")


#: what an undecided generate-match answer scores: "tie" (every option 0: a tie, scored by the run's tie rule;
#: hardneg's default, stated in the output) or "wrong" (counted as a wrong answer: lmms-eval without its judge, the
#: TempCompass authors' --disable_llm)
UNDECIDED_RULES = ("tie", "wrong")


@dataclass(frozen=True)
class AnswerRules:
    """What a protocol set does with a generated answer, as its source does.

    stop: cut the decoded answer at the first of these strings (lmms-eval: its task's `until`, "\\n\\n" by default,
        lmms_eval/api/task.py; the Qwen2-VL wrapper cuts there, `generate_until`).
    strip: strip surrounding whitespace after the cut (lmms-eval's wrapper: `ans[:stop_pos].strip()`).
    undecided: `UNDECIDED_RULES`; "wrong" is scored as a wrong answer (the pessimistic tie rule on that item).
    source: where these rules come from (file and function), recorded in provenance.
    """

    stop: tuple[str, ...] = ()
    strip: bool = False
    undecided: str = "tie"
    source: str = "hardneg's own: the answer as decoded; an undecided answer is a tie"
    #: the source's judge prompt for an undecided answer, with {question}, {answer} (a ground truth) and
    #: {prediction} (`hardneg.judges.LLMJudge`, `--judge`); None: no judge prompt
    judge_prompt: str | None = None

    def __post_init__(self) -> None:
        if self.undecided not in UNDECIDED_RULES:
            raise ValueError(f"undecided {self.undecided!r}: use one of {UNDECIDED_RULES}")

    def clean(self, answer: str) -> str:
        """The answer as the source's harness hands it to its matcher."""
        cut = len(answer)
        for stop in self.stop:
            if stop and stop in answer:
                cut = min(cut, answer.index(stop))
        answer = answer[:cut]
        return answer.strip() if self.strip else answer

    def identity(self) -> dict:
        return {"stop": list(self.stop), "strip": self.strip, "undecided": self.undecided, "source": self.source,
                "judge_prompt": self.judge_prompt}


@dataclass(frozen=True)
class VLMPrompt:
    """How a video LLM is asked about one benchmark's captions: protocol, user prompt, where it comes from.

    protocol: one of `VLM_PROTOCOLS`.
    prompt: the user turn, put into the model's own chat template. It holds `{video}` once (the video's
        tokens) and `{caption}` (caption-likelihood: `{caption}` is the assistant's answer after the
        user turn, so it must end the prompt; yes-probability: the caption inside the question) or
        `{options}` (choice-letter: the lines "A. caption", "B. caption", ...).
    source: the authors' file and function the prompt follows (docs/models.md lists them).
    version: bumped whenever the prompt changes; recorded with every score (provenance, cache keys).
    """

    protocol: str = "caption-likelihood"
    prompt: str = "{video}\nDescribe this video in one sentence.\n{caption}"
    source: str = "no released protocol for video LLMs: a one-sentence description prompt (hardneg's own)"
    version: str = "1"
    #: generate-match: "module:function" (item -> str), the item's own question text that fills `{question}`; the
    #: item is {"captions", "provenance"} (never the label)
    item_text: str | None = None
    #: generate-match: "module:function" (answer, item) -> option index or None (the rule cannot decide)
    matcher: str | None = None
    #: generate-match: the longest answer decoded (greedy)
    max_new_tokens: int = 32
    #: caption-likelihood: "mean" (mean log-probability of the caption's tokens) or "vilma-perplexity" (ViLMA's
    #: run_blip2.py, main: each frame scored alone, the summed negative log-likelihood over (tokens + 1), averaged
    #: over frames, exponentiated; the score is minus that perplexity, so higher still means a better match)
    normalize: str = "mean"
    #: generate-match: what happens to the decoded answer before the matcher, and to an answer the matcher (and the
    #: judge) cannot decide (`AnswerRules`); each protocol set follows its source; None: filled in after construction
    answers: "AnswerRules" = None
    #: the system turn put before the user turn (None: none; lmms-eval's Qwen2-VL wrapper always sends one)
    system: str | None = None
    #: (min_pixels, max_pixels) per frame for Qwen-VL families, the harness's own limits (lmms-eval's Qwen2-VL
    #: wrapper: 3136, 602112); None: the checkpoint's processor settings
    pixels: tuple[int, int] | None = None
    #: the frames the protocol set's source takes (a `hardneg.video.FrameSettings`, e.g. lmms-eval's wrapper's
    #: qwen-vl-utils recipe), used when the run's frames are left at their defaults; None: the run's frames
    frames: Any = None
    #: the dtype the source's harness loads the model in ("bfloat16": lmms-eval's Qwen2.5-VL wrapper hard-codes it);
    #: None: hardneg's (float32 on the CPU)
    dtype: str | None = None
    #: the 3-D positions of Qwen-VL models: None (Qwen's published rule, `hardneg.models.vlm.positions`) or
    #: "transformers" (the installed transformers' `get_rope_index`, as lmms-eval's wrappers run it)
    positions: str | None = None
    #: generate-match decoding: 0 is greedy; above 0, sampling at this temperature (TempCompass's Video-LLaVA script:
    #: do_sample=True, temperature=0.1), recorded in provenance
    temperature: float = 0.0
    #: sampling: only the `top_k` most likely tokens (None: all; transformers' generate defaults to 50)
    top_k: int | None = None
    #: sampling: the seed of the torch generator drawn from, afresh for every answer (recorded in provenance)
    seed: int = 0
    #: the harness per model type, where its wrapper for that family differs: ((model_type, ((field, value), ...)),
    #: ...); a field "answers" holds ((AnswerRules field, value), ...). Applied by `for_model_type`.
    model_harness: tuple = ()

    def decoding(self) -> str:
        """The generate-match decoding in words (provenance)."""
        if not self.temperature:
            return f"greedy, at most {self.max_new_tokens} new tokens"
        return (f"sampling: temperature {self.temperature}, top_k {self.top_k}, torch generator seeded {self.seed} "
                f"for every answer; at most {self.max_new_tokens} new tokens")

    def for_model_type(self, model_type: str | None) -> "VLMPrompt":
        """This protocol with the harness settings its source uses for `model_type` (`model_harness`), if any."""
        for name, overrides in self.model_harness:
            if name == model_type:
                fields = dict(overrides)
                if "answers" in fields:
                    fields["answers"] = replace(self.answers, **dict(fields["answers"]))
                return replace(self, **fields, model_harness=())
        return self

    def __post_init__(self) -> None:
        if not (isinstance(self.temperature, (int, float)) and self.temperature >= 0) or (
                self.top_k is not None and not (isinstance(self.top_k, int) and self.top_k > 0)):
            raise ValueError(f"temperature {self.temperature!r} must be >= 0 and top_k {self.top_k!r} a positive "
                             "integer or None")
        if self.positions not in (None, "transformers"):
            raise ValueError(f"positions {self.positions!r}: use None (Qwen's rule) or 'transformers'")
        if self.answers is None:
            object.__setattr__(self, "answers", AnswerRules())
        check_vlm_prompt(self.protocol, self.prompt)
        if self.protocol == "generate-match" and not (self.item_text and self.matcher):
            raise ValueError("a generate-match protocol names its item_text and matcher functions ('module:function')")
        if self.normalize not in ("mean", "vilma-perplexity") or (self.normalize != "mean"
                                                                  and self.protocol != "caption-likelihood"):
            raise ValueError(f"normalize {self.normalize!r}: use 'mean', or 'vilma-perplexity' with caption-likelihood")

    def function(self, which: str) -> Callable:
        """The declared `item_text` or `matcher` function."""
        module, _, name = str(getattr(self, which)).partition(":")
        return getattr(importlib.import_module(module), name)


def check_vlm_prompt(protocol: str, prompt: str) -> None:
    """A clear error for an unknown protocol or a prompt without the slots its protocol needs."""
    if protocol not in VLM_PROTOCOLS:
        raise ValueError(f"unknown video-LLM protocol {protocol!r}; use one of {', '.join(VLM_PROTOCOLS)} "
                         "(--protocol; docs/models.md, 'Video LLMs')")
    slot = {"choice-letter": OPTIONS_SLOT, "generate-match": QUESTION_SLOT}.get(protocol, CAPTION_SLOT)
    if not isinstance(prompt, str) or prompt.count(slot) != 1 or prompt.count(VIDEO_SLOT) != 1:
        raise ValueError(f"--prompt for protocol {protocol!r} must hold {VIDEO_SLOT} once (where the video goes) and "
                         f"{slot} once (where the {slot.strip('{}')} goes); got {str(prompt)[:120]!r}")
    if protocol == "caption-likelihood" and not prompt.rstrip().endswith(CAPTION_SLOT):
        raise ValueError(f"--prompt for protocol 'caption-likelihood' must end with {CAPTION_SLOT}: the caption is the "
                         f"text whose likelihood is read, after everything else; got {prompt[:120]!r}")
    if prompt.index(slot) < prompt.index(VIDEO_SLOT):
        raise ValueError(f"--prompt for protocol {protocol!r} must put {VIDEO_SLOT} before {slot}: the video and the "
                         "prompt before the caption are run once and shared by every caption; got "
                         f"{prompt[:120]!r}")


_HEX40 = set("0123456789abcdef")


@dataclass(frozen=True)
class ReleaseFile:
    """One file of the authors' release at the pinned commit (`hardneg fetch` downloads and checks it).

    path: its path in the authors' repository. size: bytes (None: not known offline). sha256: of the bytes,
    checked before use. git_blob: the file's git blob id (sha1 of "blob <size>\\0" + bytes), the check used where
    the sha256 could not be computed offline (a file the offline snapshot lacks). raw_name: its name in the raw
    folder the parser reads (default: the last part of `path`). commit: the commit the file is read at when it is
    not the source's (a file only an earlier commit holds). optional: listed, not fetched (another copy of a file
    fetched). lfs: the file is stored with Git LFS (downloaded from GitHub's media host, not the raw host).
    url: where it is downloaded from; left empty, `Source` derives it from its repo, the commit and `path` (a raw
    URL at the commit, so the path is written once); `--mirror` replaces the scheme and host and keeps the path.
    """

    path: str
    size: int | None
    sha256: str
    raw_name: str = ""
    git_blob: str = ""
    commit: str = ""
    optional: bool = False
    lfs: bool = False
    url: str = ""

    def __post_init__(self) -> None:
        ok_sha = len(self.sha256) == 64 and set(self.sha256) <= _HEX40
        ok_blob = len(self.git_blob) == 40 and set(self.git_blob) <= _HEX40
        if not (ok_sha or (not self.sha256 and ok_blob)) or (self.size is not None and int(self.size) < 0):
            raise ValueError(f"ReleaseFile({self.path!r}): give a sha256 of 64 lowercase hex digits (or, where it "
                             "could not be computed, git_blob of 40), and a size >= 0 or None")
        if not self.raw_name:
            object.__setattr__(self, "raw_name", self.path.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class VideoArchive:
    """One file of a video repo on the Hub: its name in the repo, its size in bytes (None: not published; `approx`
    says the listing's figure) and its sha256 where known (the LFS pointer's oid; checked after download)."""

    name: str
    size: int | None
    sha256: str = ""
    approx: str = ""


#: how a video source is reached: "hub" (a public Hub repo `hardneg fetch` downloads and unpacks) or "manual"
#: (no redistributable copy: the official source and the steps a user takes, printed as the message)
VIDEO_SOURCE_KINDS = ("hub", "manual")


@dataclass(frozen=True)
class VideoSource:
    """Where (some of) a benchmark's videos are fetched from, pinned, and how a video id maps to a file.

    kind "hub": repo_id (repo_type, revision: a 40-hex commit) holds `archives` (zip or tar); each member whose path
    matches `member_pattern` ("videos/{id}.mp4": `{id}` is the video id) is the video of that id; `id_to_file` says
    the same in words. cache_dir: lmms-eval's folder for these videos under $HF_HOME (its task YAML's
    dataset_kwargs.cache_dir, with the sub-folder its utils.py reads), reused when a user already has it.
    kind "manual": official (where the videos are), steps (what a user does, in order), why (why there is no copy).
    part: which videos this source covers when a benchmark has several ("config msrvtt", "VATEX videos").
    evidence: where these facts were read (task YAML, repo listing, paper).
    """

    kind: str
    repo_id: str = ""
    repo_type: str = "dataset"
    revision: str = ""
    archives: tuple[VideoArchive, ...] = ()
    member_pattern: str = "{id}.mp4"
    id_to_file: str = ""
    cache_dir: str = ""
    official: str = ""
    steps: tuple[str, ...] = ()
    why: str = ""
    evidence: str = ""
    part: str = ""

    def __post_init__(self) -> None:
        if self.kind not in VIDEO_SOURCE_KINDS:
            raise ValueError(f"VideoSource(kind={self.kind!r}): use one of {VIDEO_SOURCE_KINDS}")
        if self.kind == "hub" and not (self.repo_id and len(self.revision) == 40 and set(self.revision) <= _HEX40
                                       and self.archives and self.member_pattern.count("{id}") == 1):
            raise ValueError(f"VideoSource(hub, {self.repo_id!r}): needs repo_id, a 40-hex revision, archives and a "
                             "member_pattern holding {id} once")
        if self.kind == "manual" and not (self.official and self.steps and self.why):
            raise ValueError("VideoSource(manual): say where the videos are (official), the steps and why no copy")

    @property
    def size(self) -> int:
        """Bytes downloaded for the videos (the archives together; one of unknown size counts 0)."""
        return sum(a.size or 0 for a in self.archives)


@dataclass(frozen=True)
class Source:
    """A benchmark's pinned sources: the authors' release files at one commit, and where its videos are.

    repo: the authors' repository ("github.com/owner/name"). commit: the 40-hex commit the files are pinned at.
    files: the release files the parser reads (empty: none has a hash-pinned source; `notes` says where they are
    and what a user does, printed by `hardneg fetch`). videos: a `VideoSource`, or one per part where a benchmark's videos
    come from several places (MSR-VTT from a Hub zip, VATEX only from YouTube), or None (not pinned in this version,
    said by every surface). notes: one line on anything a user should know
    (files pinned elsewhere, a departure). `hardneg fetch` reads only this; docs/fetching.md describes it.
    """

    repo: str
    commit: str
    license: str
    files: tuple[ReleaseFile, ...]
    videos: "VideoSource | tuple[VideoSource, ...] | None"
    notes: str = ""

    def __post_init__(self) -> None:
        if len(self.commit) != 40 or not set(self.commit) <= _HEX40:
            raise ValueError(f"Source({self.repo!r}): commit must be 40 lowercase hex digits, got {self.commit!r}")
        if not self.files and not self.notes:
            raise ValueError(f"Source({self.repo!r}): name the release files, or say in notes why none is pinned "
                             "and where they are")
        object.__setattr__(self, "files", tuple(f if f.url else replace(f, url=self.file_url(f)) for f in self.files))

    def file_url(self, f: ReleaseFile) -> str:
        """Where GitHub serves `f` at its commit: the raw host, or the media host for a Git LFS file."""
        owner_name = self.repo.removeprefix("github.com/")
        if self.repo == owner_name or owner_name.count("/") != 1:
            raise ValueError(f"Source({self.repo!r}): repo must be 'github.com/<owner>/<name>' to derive its files' "
                             f"URLs; give {f.path!r} a url= otherwise")
        commit = f.commit or self.commit
        if f.lfs:
            return f"https://media.githubusercontent.com/media/{owner_name}/{commit}/{f.path}"
        return f"https://raw.githubusercontent.com/{owner_name}/{commit}/{f.path}"

    @property
    def video_parts(self) -> tuple[VideoSource, ...]:
        """The video sources as a tuple (empty: none pinned)."""
        if self.videos is None:
            return ()
        return self.videos if isinstance(self.videos, tuple) else (self.videos,)

    @property
    def fetched_files(self) -> tuple[ReleaseFile, ...]:
        """The files `hardneg fetch` downloads (the optional ones are only listed)."""
        return tuple(f for f in self.files if not f.optional)

    @property
    def size(self) -> int:
        """Bytes of the fetched release files together (a file of unknown size counts 0)."""
        return sum(f.size or 0 for f in self.fetched_files)


@dataclass(frozen=True)
class Benchmark:
    """Everything that is true of one benchmark. See CONTRIBUTING.md, "Add a benchmark"."""

    name: str  # identifier: CLI argument, predictions metadata, leaderboard tab key
    title: str  # short display title
    task: str  # "multiple_choice" | "retrieval"
    hub_id: str  # the Hub dataset repo
    pretty_name: str  # the dataset card's title
    paper_title: str  # the paper's title (card, board links)
    paper_url: str  # where the paper is (card, `hardneg list`, board links)
    citation: str  # BibTeX
    licenses: tuple[str, ...]  # Hub license ids
    license_note: str  # one line on the license and the videos' own terms (card, board)
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
    #: string columns its items carry beyond `hardneg.schema.MC_ITEM_SCHEMA`, read with the items so
    #: that a metric's `where` / `all_of` can use them (ViLMA: `part`, `item_key`)
    item_columns: tuple[str, ...] = ()
    sample: str = ""  # folder (relative to this package's data/samples/) of a tiny raw release
    sample_root: str = ""  # absolute folder holding `sample`, for declarations outside this package
    reported: tuple[ReportedRow, ...] = ()  # the papers' own numbers, shown beside recomputed ones, never recomputed
    tags: tuple[str, ...] = ()  # Hub card tags
    usage_note: str = ""  # how to use the built dataset beyond the shared schema (card)
    #: released per-item output formats `hardneg import-scores` reads for this benchmark (first = default)
    score_importers: tuple[ScoreImporter, ...] = ()
    #: retrieval: each query has one original video besides any extra positives (FIRE), so the
    #: original-only R@k / MeanR / MRR mean something; False when every relevant video counts alike
    #: (SSv2-Temporal's `match`): then only C@k and mAP are reported
    original_positive: bool = True
    config_descriptions: dict[str, str] = field(default_factory=dict)  # config name -> one line for the card
    #: configs that are tables beside a scoreable config (FIRE's `<name>-queries`, `<name>-videos`)
    companion_suffixes: tuple[str, ...] = ()
    order: int = 100  # position in lists, tabs and pickers (lower first)
    #: negative types its items may carry beyond the shared ones (`hardneg.schema.NEGATIVE_TYPES`)
    negative_types: tuple[str, ...] = ()
    #: per-example views from the benchmark's paper that the demo adds under one example's result, by name
    #: (`"delta_s"`: Feint6K's Δs of object vs action swaps, Fig. 5); empty: none
    example_views: tuple[str, ...] = ()
    #: the config of video-caption pairs (`hardneg.schema.PAIR_SCHEMA`) with a `train` split, for
    #: training (`hardneg.items.load_pairs`); "" when there is none. It is never scored.
    pairs_config: str = ""
    #: "module:function" writing the video of one sample video id: f(sample_dir, video_id, path);
    #: "" for the default synthetic video made from the id (`hardneg.run.sample_videos`)
    sample_video_writer: str = ""
    #: how the configs combine into the benchmark's one number (None: the mean over every scoreable config,
    #: or the one config when there is one; every declaration in this package says it)
    overall: Headline | None = None
    #: config -> the config whose items include all of its items (same ids): a submission of the larger
    #: config gives the subset's number from the same scores (ATP-Hard's `causal` and `temporal`)
    subset_of: dict[str, str] = field(default_factory=dict)
    #: other item sets the authors evaluate on (`hardneg evaluate --items NAME`)
    item_choices: tuple[ItemChoice, ...] = ()
    #: how a video LLM scores this benchmark by default (protocol + prompt, after the authors' code;
    #: `hardneg run --protocol/--prompt` override it): `VLMPrompt`
    vlm: VLMPrompt = VLMPrompt()
    #: the other protocol sets (`PROTOCOL_SETS`): ((set name, VLMPrompt), ...), e.g. the authors' released protocol
    #: and lmms-eval's; a set not listed uses `vlm`
    vlm_sets: tuple[tuple[str, VLMPrompt], ...] = ()
    #: the pinned release files and video source (`hardneg fetch`); None: nothing to fetch (a generated benchmark)
    source: Source | None = None

    def vlm_for(self, protocol_set: str = "default") -> VLMPrompt:
        """The protocol of `protocol_set` for this benchmark: its own entry, else `vlm` with a source saying so."""
        if protocol_set not in PROTOCOL_SETS:
            raise ValueError(f"unknown --protocol-set {protocol_set!r}; use one of {', '.join(PROTOCOL_SETS)}")
        own = dict(self.vlm_sets).get(protocol_set)
        if own is not None or protocol_set == "default":
            return own or self.vlm
        from dataclasses import replace

        return replace(self.vlm, source=f"protocol set {protocol_set!r}: {self.name} declares no separate one; its "
                                        f"default protocol ({self.vlm.source})")

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"benchmark {self.name!r}: task must be one of {TASKS}, got {self.task!r}")
        if ":" not in self.parser:
            raise ValueError(f"benchmark {self.name!r}: parser must be 'module:function', got {self.parser!r}")
        if any(":" not in i.function for i in self.score_importers):
            raise ValueError(f"benchmark {self.name!r}: every score importer's function must be 'module:function'")
        keys = [m.key for m in self.metrics]
        if not keys or len(set(keys)) != len(keys):
            raise ValueError(f"benchmark {self.name!r}: needs headline metrics with distinct keys, got {keys}")
        known = set(self.item_columns) | set(self.breakdowns) | {"category", "source_dataset"}
        for m in self.metrics:
            used = [c for c in (m.all_of, m.where[0] if m.where else None) if c]
            if any(c not in known for c in used):
                raise ValueError(f"benchmark {self.name!r}: metric {m.key} uses columns {used}; declare the ones "
                                 f"beyond category/source_dataset in item_columns (has {list(self.item_columns)})")
            described = set(self.config_descriptions)
            if m.configs is not None and (not m.configs or (described and not set(m.configs) <= described)):
                raise ValueError(f"benchmark {self.name!r}: metric {m.key} has configs={m.configs!r}; name configs "
                                 f"of this benchmark ({sorted(described)}) or leave it None for every config")

        self._check_overall()

    def _check_overall(self) -> None:
        h, described = self.overall, set(self.config_descriptions)
        if h is not None:
            if h.metric is not None and h.metric not in self.headline:
                raise ValueError(f"benchmark {self.name!r}: overall metric {h.metric!r} is not one of its headline "
                                 f"metrics {self.headline}")
            if described and not set(h.configs) <= described:
                raise ValueError(f"benchmark {self.name!r}: overall configs {h.configs!r} are not configs of this "
                                 f"benchmark ({sorted(described)})")
            m = self.overall_metric
            if h.rule == "pooled" and m is not None and (m.over or m.where or m.all_of):
                raise ValueError(f"benchmark {self.name!r}: a 'pooled' overall needs a plain mean over items; "
                                 f"{m.key} is averaged over groups or rows; use rule 'mean' or 'config'")
        for sub, whole in self.subset_of.items():
            if described and not {sub, whole} <= described:
                raise ValueError(f"benchmark {self.name!r}: subset_of names {sub!r} -> {whole!r}, not configs of "
                                 f"this benchmark ({sorted(described)})")
        if len({c.name for c in self.item_choices}) != len(self.item_choices) or \
                any(":" not in c.function for c in self.item_choices):
            raise ValueError(f"benchmark {self.name!r}: item_choices need distinct names and 'module:function'")

    # ------------------------------------------------------------------ derived facts

    @property
    def overall_metric(self) -> Metric | None:
        """The metric of the benchmark's one number: the declared one, else the first fraction headline metric."""
        key = self.overall.metric if self.overall is not None else None
        for m in self.metrics:
            if (m.key == key) if key else vocabulary.unit(m.key) == vocabulary.FRACTION:
                return m
        return None

    def overall_rule(self, available) -> Headline:
        """The declared rule, or the default for a declaration without one (one config: that config; several:
        the unweighted mean over them)."""
        if self.overall is not None:
            return self.overall
        configs = self.scoreable(list(available))
        return Headline("config", (configs[0],)) if len(configs) == 1 else Headline("mean")

    def item_choice(self, name: str) -> ItemChoice:
        for c in self.item_choices:
            if c.name == name:
                return c
        have = [c.name for c in self.item_choices]
        raise ValueError(f"benchmark {self.name!r} declares no item set {name!r}; "
                         + (f"use one of {have}" if have else "it has only its full item set (leave --items out)"))

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

    def metrics_for(self, config: str | None) -> tuple[Metric, ...]:
        """The headline metrics computed on one config (every metric when `config` is None)."""
        return tuple(m for m in self.metrics if config is None or m.configs is None or config in m.configs)

    def headline_for(self, config: str | None) -> list[str]:
        return [m.key for m in self.metrics_for(config)]

    def parse_function(self) -> Callable[[Path], Any]:
        module, _, func = self.parser.partition(":")
        return getattr(importlib.import_module(module), func)

    def score_importer(self, name: str | None = None) -> ScoreImporter:
        """The importer named `name` (default: the first declared); a clear error listing them otherwise."""
        if not self.score_importers:
            raise ValueError(f"benchmark {self.name!r} declares no importer of released scores; "
                             "score a model with `hardneg score` instead")
        if name is None:
            return self.score_importers[0]
        for imp in self.score_importers:
            if imp.name == name:
                return imp
        raise ValueError(f"benchmark {self.name!r} has no score format {name!r}; use one of "
                         f"{[i.name for i in self.score_importers]}")

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
