"""`hardneg.run_model`: any model over any set of benchmarks, in one call.

For each benchmark and each of its scoreable configs: score (`hardneg.scoring.score_benchmark`,
resumable), evaluate (`hardneg.evaluation.evaluate_predictions`, the one results engine), and
write every result to `<out>/results.json` after each config (atomically), so an interrupted run
keeps what it finished. `hardneg run` and `hardneg quickstart` are this function plus a table.

Which benchmarks and configs there are comes from the declarations (`hardneg.benchmarks`) and
the built folders; nothing here knows a benchmark by name.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from hardneg import benchmarks as registry
from hardneg import truncation, vocabulary
from hardneg.settings import EvalSettings, Execution, ModelSpec, RunSpec
from hardneg.video import FrameSettings

RESULTS_FILE = "results.json"


@dataclass(frozen=True)
class Pair:
    """One (benchmark, config) to score: where its built folder is."""

    benchmark: str
    folder: Path
    config: str

    @property
    def key(self) -> str:
        return f"{self.benchmark}/{self.config}"


# ----------------------------------------------------------------------------- what to run


def benchmark_names(benchmarks: str | Iterable[str] | None) -> list[str]:
    """Names from "all" / None, "a,b" or a list; every one checked against the registry."""
    if benchmarks is None or benchmarks == "all":
        return registry.names()
    names = [b.strip() for b in benchmarks.split(",")] if isinstance(benchmarks, str) else [str(b) for b in benchmarks]
    names = [b for b in names if b]
    if not names:
        raise ValueError(f"no benchmark named; give 'all' or some of: {registry.names_text()}")
    for b in names:
        registry.get(b)  # a clear error naming the known benchmarks
    return list(dict.fromkeys(names))


def sample_video_writers() -> dict[str, Any]:
    """{video id: f(path)} for the sample videos a declaration makes itself (`sample_video_writer`)."""
    import functools
    import importlib

    from hardneg.datasets import sample_video_ids

    out: dict[str, Any] = {}
    for decl in registry.all_benchmarks().values():
        if decl.sample and decl.sample_video_writer:
            module, _, func = decl.sample_video_writer.partition(":")
            writer = getattr(importlib.import_module(module), func)
            for vid in sample_video_ids(decl.name):
                out[vid] = functools.partial(writer, decl.sample_dir(), vid)
    return out


def sample_videos(video_ids: list[str], cache_dir: Path) -> Path:
    """Videos for the built-in samples' video ids (made once, kept in the cache): a declaration's own
    writer where it has one (the world renders its scenes), else a synthetic video made from the id."""
    from hardneg.video import write_synthetic_video

    folder = Path(cache_dir) / "sample_videos_v2"  # v2: H.264, playable in browsers
    writers = None
    for vid in video_ids:
        path = folder / f"{vid}.mp4"
        if not path.is_file():
            writers = sample_video_writers() if writers is None else writers
            writers[vid](path) if vid in writers else write_synthetic_video(path, vid)
    return folder


def build_default_samples(names: list[str], explicit: bool, out: Path) -> dict[str, Path]:
    """Build the built-in samples of `names` into `out` (all of them: only those that ship one)."""
    from hardneg.datasets import build_samples, sample_benchmarks

    have = set(sample_benchmarks())
    missing = [b for b in names if b not in have]
    if missing and explicit:
        raise ValueError(f"no built-in sample for {missing}; benchmarks with one: {', '.join(sorted(have))} "
                         "(or pass data= / --data with built folders)")
    names = [b for b in names if b in have]
    return build_samples(out, overwrite=True, benchmarks=tuple(names))


def data_folders(data: str | Path, names: list[str], explicit: bool) -> dict[str, Path]:
    """{benchmark: built folder}: `data` itself when it is one built folder, else `data/<benchmark>/`."""
    from hardneg.items import folder_benchmark

    root = Path(data)
    if not root.is_dir():
        raise FileNotFoundError(f"data folder {root} does not exist; build one with `hardneg build`")
    own = folder_benchmark(root)
    if own:
        if explicit and names != [own]:
            raise ValueError(f"{root} is a built {own} folder, but benchmarks {names} were asked for")
        return {own: root}
    found = {b: root / b for b in names if (root / b / "README.md").is_file()}
    missing = [b for b in names if b not in found]
    if explicit and missing:
        raise FileNotFoundError(f"no built folder for {missing} under {root}; expected "
                                f"{', '.join(str(root / b) for b in missing)} (`hardneg build <name> --out ...`)")
    if not found:
        raise FileNotFoundError(f"no built benchmark folders under {root}; expected <benchmark>/ subfolders "
                                f"({registry.names_text()}) written by `hardneg build`")
    return found


def plan(folders: dict[str, Path]) -> list[Pair]:
    """Every scoreable config of every built folder, in declaration order."""
    from hardneg.items import card_configs

    pairs = []
    for bench, folder in folders.items():
        configs = registry.get(bench).scoreable(card_configs(folder))
        if not configs:
            raise ValueError(f"{folder} has no scoreable configs in its README.md; is it a `hardneg build` output?")
        pairs += [Pair(bench, Path(folder), c) for c in configs]
    return pairs


# ----------------------------------------------------------------------------- resuming


def _run_key(model, frames: FrameSettings, data_revision: str, videos: str | None, model_id: str | None = None) -> str:
    parts = {"model": model.identity(), "frames": frames.identity(), "data": data_revision, "videos": videos}
    if model_id is not None:  # the name in the files: another name means rewriting them (keys without one unchanged)
        parts["model_id"] = model_id
    return "sha256:" + hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _previous_keys(out: Path) -> dict[str, str]:
    """{benchmark/config: run key} of the results.json already in `out` (none when absent or unreadable)."""
    path = out / RESULTS_FILE
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        return {k: v["run"]["key"] for k, v in old.items() if isinstance(v, dict) and "run" in v}
    except (OSError, ValueError, TypeError, KeyError):
        return {}


def _scored_by(pred: Path) -> str | None:
    """The model id recorded in an existing predictions file (None when it cannot be read)."""
    import pyarrow.parquet as pq

    from hardneg.schema import read_predictions_metadata

    try:
        return read_predictions_metadata(pq.read_schema(pred)).get("model_id")
    except Exception:  # not a predictions file: treated as someone else's
        return None


def _needs_scoring(pred: Path, key: str, previous: dict[str, str], pair: Pair, model_id: str, overwrite: bool) -> bool:
    """Reuse a predictions file scored with the same settings; refuse to replace another model's."""
    if not pred.exists() or overwrite:
        return True
    if previous.get(pair.key) == key:
        return False
    owner = _scored_by(pred)
    if owner != model_id:
        raise FileExistsError(f"{pred} holds predictions of model {owner!r}, not {model_id!r}; choose another out "
                              "folder or pass overwrite=True (--overwrite) to replace them")
    return True


# ----------------------------------------------------------------------------- the run


def _generation_record(pred: Path) -> dict[str, Any] | None:
    """The predictions file's record of generated answers (protocol generate-match), if it has one."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(pred).metadata or {}
    raw = meta.get(b"hardneg")
    return json.loads(raw).get("generation") if raw else None


def run_model(model: Any, benchmarks: str | Iterable[str] | None = "all", data: str | Path | None = None,
              videos: str | Path | None = None, out: str | Path = "hardneg-run",
              **options: Any) -> dict[str, dict[str, Any]]:
    """Score `model` on every config of `benchmarks`, evaluate, write `<out>/results.json`; return the results.

    model: a model name or Hub id for `hardneg.models.load_model` ("tiny-clip",
        "openai/clip-vit-base-patch32", "blind-unigram", ...), a `hardneg.models.VideoTextModel`, or
        ANY object with
          * `encode_video(videos) -> (V, D)` and `encode_text(texts) -> (T, D)` arrays, optionally
            `similarity(video_emb, text_emb) -> (V, T)` (default: cosine), or
          * `score(video, captions) -> (len(captions),)` scores (higher = better match),
        or a plain function `f(video, captions)`. Each video is a (T, H, W, 3) uint8 NumPy array of
        frames sampled by `frames`. Optional attributes: `model_id` (its name in the results),
        `revision` (a version: makes runs resumable and caches video embeddings across calls),
        `uses_video = False` (text-only: no video decoded, `score` gets `video=None`).
        Or a `hardneg.settings.ModelSpec` (the model with its settings). See docs/models.md.
    benchmarks: "all", "a,b" or a list of declared names (`hardneg list`).
    data: None builds the built-in samples into `<out>/data` and makes synthetic videos for them
        (offline, seconds); else a folder with `<benchmark>/` built folders (`hardneg build`),
        or one built folder.
    videos: folder of videos named by video id (needed with `data` unless the model is text-only).
    out: work folder: `predictions/<benchmark>-<config>.parquet`, `results.json` (and charts).
        A predictions file already there is reused when it was scored with the same model identity,
        frame settings, data and videos; another model's is never replaced unless `overwrite`.

    The other keyword arguments are the fields of the settings objects (`hardneg.settings`), by name:
    frames: how frames are sampled (`hardneg.video.FrameSettings`; default 8 frames, shorter side 224).
    ties, resamples, seed, confidence: evaluation settings (`EvalSettings`; `hardneg evaluate`); resamples=0: no
        intervals.
    device, fp16, revision: how a model named by a string is loaded (`ModelSpec`).
    model_id: the name written into every predictions file (`ORG/NAME`, what `hardneg submit` and the board use;
        default: the model's own name).
    judge: a causal LM (Hub id or folder: `hardneg.judges.LLMJudge`) or a callable (question, answer, captions)
        that decides the generated answers a protocol set's rule cannot (video LLMs, generate-match).
    protocol, prompt, protocol_set: how a video LLM scores, over each benchmark's declared protocol; prompt is
        one string or {benchmark: prompt}; docs/models.md.
    cache_dir: embedding and sample-video cache (default `$HARDNEG_CACHE` or ~/.cache/hardneg). overwrite.
    progress: a progress bar over (benchmark, config) pairs. charts: a PNG chart per config (`RunSpec`).
    batch_size, backend, num_workers, ray_address, num_gpus, ray_runtime_env: where the scoring batches run
        (`Execution`; backend/num_workers for named models only); or `execution=` the object.

    Returns {"<benchmark>/<config>": result} where each result is `hardneg evaluate`'s JSON
    (`metrics`, `chance`, `headline`, `n`, `coverage`, `breakdowns`, `provenance`, ...) plus `run`
    (with `settings`: the objects as given, read back by `hardneg.settings.recorded_settings`).
    """
    from hardneg.settings import EvalSettings, Execution, ModelSpec, RunSpec, from_keywords, refuse_unknown

    where = "run_model"
    if "resamples" in options:  # the evaluation's n_resamples, by run_model's own name for it
        options["n_resamples"] = options.pop("resamples")
    evaluation = from_keywords(EvalSettings, where, options.pop("evaluation", None), options)
    spec = from_keywords(ModelSpec, where, model if isinstance(model, ModelSpec) else ModelSpec(model), options)
    run = from_keywords(RunSpec, where, RunSpec(benchmarks, data, videos, out, evaluation=evaluation), options)
    execution = from_keywords(Execution, where, options.pop("execution", None) or Execution(progress=False), options)
    frames = options.pop("frames", None) or FrameSettings()
    refuse_unknown(where, options, (ModelSpec, RunSpec, EvalSettings, Execution), also=("frames",))
    return run_specs(spec, run, frames, execution)


def run_specs(spec: ModelSpec, run: RunSpec, frames: FrameSettings = FrameSettings(),
              execution: Execution = Execution(progress=False)) -> dict[str, dict[str, Any]]:
    """`run_model` on the settings objects: the model (`spec`), what to run (`run`), the frames, and where the
    scoring batches run (`execution`)."""
    from dataclasses import replace

    from hardneg.evaluation import evaluate_predictions, plot_result
    from hardneg.fetching.pipeline import source_record
    from hardneg.io import atomic_write_text
    from hardneg.items import load_benchmark
    from hardneg.models.prompting import bind_protocol
    from hardneg.resources import cache_dir as default_cache_dir
    from hardneg.scoring import check_model_id, score
    from hardneg.settings import ScoreJob, settings_record
    from hardneg.video import with_processor_kwargs

    model, model_id, videos = spec.model, check_model_id(spec.model_id), run.videos
    if spec.prompt is not None:  # given on purpose: '' is refused, not the default prompt (N8)
        from hardneg import guards

        spec = replace(spec, prompt=guards.prompt(spec.prompt))
    names = benchmark_names(run.benchmarks)
    explicit = not (run.benchmarks is None or run.benchmarks == "all")
    out = Path(run.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(run.cache_dir) if run.cache_dir else default_cache_dir()
    m = spec.load()
    user_object = m is not model and not isinstance(model, (str, Path))
    if user_object and not execution.same_process:
        raise ValueError("a model given as a Python object runs in this process only: leave backend/num_workers "
                         "at their defaults, or register it as an adapter (CONTRIBUTING.md) to use workers")
    private_cache = None
    try:
        if run.data is None:
            folders = build_default_samples(names, explicit, out / "data")
            if videos is None and m.uses_video:
                from hardneg.datasets import sample_video_ids

                videos = sample_videos(sorted({v for b in folders for v in sample_video_ids(b)}), cache)
        else:
            folders = data_folders(Path(run.data).expanduser(), names, explicit)
        pairs = plan(folders)
        if not getattr(m, "persistent_cache", True):
            private_cache = Path(tempfile.mkdtemp(prefix="hardneg-run-cache-"))
        score_cache = private_cache or cache
        videos_path = str(Path(videos).expanduser().resolve()) if (videos and m.uses_video) else None
        # workers (backend/num_workers) load a named model again by the name the user gave
        name = str(model) if isinstance(model, (str, Path)) else m.model_id
        for pair in pairs:  # every benchmark's protocol and prompt checked before anything is scored
            bind_protocol(m, registry.get(pair.benchmark), *spec.how_asked())
        previous = {} if run.overwrite else _previous_keys(out)
        results: dict[str, dict[str, Any]] = {}
        bar = _progress(pairs, run.progress)
        for pair in bar:
            if run.progress:
                bar.set_postfix_str(pair.key)
            pred = out / "predictions" / f"{pair.benchmark}-{pair.config}.parquet"
            data_revision = load_benchmark(str(pair.folder), pair.config, benchmark=pair.benchmark).data_revision
            bind_protocol(m, registry.get(pair.benchmark), *spec.how_asked())
            # the protocol set's own frames (lmms-eval's wrapper's), where the run's are left at their defaults
            own = getattr(getattr(m, "spec", None), "frames", None)
            pair_frames = with_processor_kwargs(frames, own)  # and --processor-kwargs (hardneg.video)
            key = _run_key(m, pair_frames, data_revision, videos_path, model_id)
            reused = not _needs_scoring(pred, key, previous, pair, model_id or m.model_id, run.overwrite)
            if not reused:  # workers (backend/num_workers) load a named model again by the name the user gave
                job = ScoreJob(str(pair.folder), pair.config, pred, videos=videos_path, benchmark=pair.benchmark,
                               cache_dir=str(score_cache), overwrite=True)
                score(job, replace(spec, model=name, judge=None), pair_frames, execution, loaded_model=m)
            import pyarrow.parquet as pq

            if pq.read_metadata(pred).num_rows == 0:  # no video of this config could be scored: said, and the run goes on
                long = _too_long(pred)
                why = (f"{len(long)} videos too long for the model, e.g. {next(iter(long.values()))}" if long else
                       "every video missing, unreadable or refused by the model")
                print(f"hardneg run: {pair.key}: no item scored ({why}); see {pred.name}'s video report",
                      file=sys.stderr)
                continue
            ev = run.evaluation
            result = evaluate_predictions(pred, ties=ev.ties, n_resamples=ev.n_resamples, seed=ev.seed,
                                          confidence=ev.confidence)
            result["run"] = {"key": key, "predictions": str(pred.relative_to(out)), "reused": reused,
                             "model": m.identity(), "videos": videos_path,
                             "settings": settings_record(spec, pair_frames, ev, execution)}
            fetched = source_record(pair.folder)
            if fetched is not None:  # fetched by `hardneg fetch`: the release commit and the videos' coverage
                result["run"]["source"] = fetched
            generated = _generation_record(pred)
            if generated:  # generate-match: how many answers the rule (or judge) decided, the undecided listed
                result["run"]["generation"] = generated
            if run.charts:
                plot_result(result, pred.with_suffix(".png"))
            results[pair.key] = result
            planned = [p.config for p in pairs if p.benchmark == pair.benchmark]
            number = benchmark_entry(pair.benchmark, results, planned)
            if number is not None:  # every config its rule needs is done: the benchmark's one number
                results[pair.benchmark] = number
            atomic_write_text(out / RESULTS_FILE, json.dumps(results, indent=2, sort_keys=True, default=str) + "\n")
        return results
    finally:
        if private_cache is not None:
            shutil.rmtree(private_cache, ignore_errors=True)
        if m is not model and hasattr(m, "close"):
            with contextlib.suppress(Exception):
                m.close()


def _too_long(pred: Path) -> dict[str, str]:
    """{video id: why} of the videos a predictions file's model refused as longer than its context."""
    import pyarrow.parquet as pq

    from hardneg.schema import read_predictions_metadata

    return (read_predictions_metadata(pq.read_schema(pred)).get("videos") or {}).get("too_long_ids") or {}


def _progress(pairs: list[Pair], show: bool):
    if not show:
        return pairs
    from tqdm.auto import tqdm

    return tqdm(pairs, desc="scoring", unit="config")


# ----------------------------------------------------------------------------- one number per benchmark


def is_config_result(result: dict[str, Any]) -> bool:
    """True for a config's result in results.json; False for a benchmark's one number (its key has no '/')."""
    return isinstance(result, dict) and "config" in result


def config_results(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The per-config entries of results.json ("<benchmark>/<config>")."""
    return {k: v for k, v in results.items() if is_config_result(v)}


def benchmark_entry(benchmark: str, results: dict[str, dict[str, Any]], available: list[str]) -> dict[str, Any] | None:
    """results.json's entry under the benchmark's own key: its one number (`hardneg.results.benchmark_value`, by
    the declaration's rule) with the same rule applied to chance; None until every config it needs is done."""
    from hardneg.results import benchmark_value

    decl = registry.get(benchmark)
    mine = {r["config"]: r for r in config_results(results).values() if r["benchmark"] == benchmark}
    number = benchmark_value(decl, {c: r["metrics"] for c, r in mine.items()}, {c: r["n"] for c, r in mine.items()},
                             available)
    if number is None:
        return None
    chance = benchmark_value(decl, {c: {k: {"value": v} for k, v in r.get("chance", {}).items()}
                                    for c, r in mine.items()}, {c: r["n_items"] for c, r in mine.items()}, available)
    first = mine[number["configs"][0]]
    key = number["metric"]
    n_items = sum(mine[c]["n_items"] for c in number["configs"])
    entry = {k: number[k] for k in ("value", "low", "high")}
    # shaped like a config's result where it can be (metrics, headline, chance, n, coverage, model_id), so code
    # reading every entry's headline metric reads this one too; no "config": it is the benchmark's own
    number.update(kind="benchmark", chance=None if chance is None else chance["value"], ties=first.get("ties"),
                  n_items=n_items, coverage=number["n"] / max(n_items, 1), model_id=first.get("model_id"),
                  headline=[key], metrics={key: entry},
                  describe=f"{key} {decl.overall_rule(available).describe(available)}")
    number["chance"] = {key: None if chance is None else chance["value"]}
    # captions the tokenizer cut, over the configs of the number (each config's own report stays with the config)
    number["text_cuts"] = truncation.total([mine[c].get("text_cuts") for c in number["configs"]])
    if number["text_cuts"] is not None:
        number["text_cuts"]["configs_cut"] = [c for c in number["configs"]
                                              if truncation.cut_count(mine[c].get("text_cuts"))]
    return number


# ----------------------------------------------------------------------------- the table


def _metric(decl, key: str):
    for m in decl.metrics:
        if m.key == key:
            return m
        if m.baseline is not None and m.baseline.key == key:
            return m.baseline
    return None


def video_cell(vr: dict[str, Any] | None) -> str:
    """The table's videos column: ok / bad, and how many of the bad ones the model refused as too long for its
    context (`VideoReport.too_long`: they are said, not silently dropped)."""
    if not vr:
        return ""
    long = int(vr.get("too_long") or 0)
    bad = int(vr.get("missing") or 0) + int(vr.get("unreadable") or 0) + long
    return f"{vr.get('ok', 0)} ok/{bad} bad" + (f" ({long} too long)" if long else "")


def table_rows(results: dict[str, dict[str, Any]]) -> list[tuple[str, ...]]:
    """(benchmark, config, n, metric, value [CI], chance, videos) per headline metric (and its baseline)."""
    rows = []
    for res in config_results(results).values():
        decl = registry.get(res["benchmark"])
        keys = []
        for key in res["headline"]:
            keys.append(key)
            base = decl.metric(key).baseline
            if base is not None:
                keys.append(base.key)
        vr = res.get("videos") or {}
        videos = video_cell(vr)
        n = str(res["n"]) if res["n"] == res["n_items"] else f"{res['n']}/{res['n_items']}"
        for key in keys:
            entry = res["metrics"].get(key)
            if entry is None or _metric(decl, key) is None:
                continue
            chance = res.get("chance", {}).get(key)
            mark = " *" if (res.get("undecided") or {}).get("count") else ""  # depends on undecided answers
            config = f"{res['config']} {truncation.CUT_MARK}" if truncation.cut_count(res.get("text_cuts")) else res["config"]
            rows.append((res["benchmark"], config, n, vocabulary.header(key),
                         vocabulary.display_entry(key, entry) + mark, vocabulary.display(key, chance), videos))
    return rows


def format_table(results: dict[str, dict[str, Any]], title: str) -> str:
    """The plain-text table `hardneg run` and `hardneg quickstart` print."""
    first = next(iter(config_results(results).values()), {})
    interval = f" [{round(100 * first.get('confidence', 0.95))}% CI]" if first.get("n_resamples") else ""
    head = ("benchmark", "config", "n", "metric", f"value{interval}", "chance", "videos")
    cells = table_rows(results)
    widths = [max(len(r[i]) for r in [head, *cells]) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    out = [title, line(head), line(tuple("-" * w for w in widths)), *map(line, cells)]
    undecided = {(r["benchmark"], r["config"]): r["undecided"] for r in config_results(results).values()
                 if (r.get("undecided") or {}).get("count")}
    for note in dict.fromkeys(u["note"] for u in undecided.values()):  # one line per rule, its configs listed
        which = ", ".join(f"{b}/{c} {u['count']}" for (b, c), u in undecided.items() if u["note"] == note)
        out.append(f"* depends on undecided answers ({which}): {note}")
    numbers = [r for r in results.values() if not is_config_result(r) and isinstance(r, dict) and "metric" in r]
    if numbers:
        head2 = ("benchmark", "metric", f"value{interval}", "chance", "how (the benchmark's one number)")
        rows2 = [(r["benchmark"] + (f" {truncation.CUT_MARK}" if truncation.cut_count(r.get("text_cuts")) else ""),
                  vocabulary.header(r["metric"]), vocabulary.display_entry(r["metric"], r),
                  vocabulary.display(r["metric"], (r.get("chance") or {}).get(r["metric"])), r.get("describe", r["rule"]))
                 for r in numbers]
        w2 = [max(len(r[i]) for r in [head2, *rows2]) for i in range(len(head2))]
        line2 = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, w2)).rstrip()  # noqa: E731
        out += ["", "one number per benchmark (board Overall, results.json under the benchmark's name):",
                line2(head2), line2(tuple("-" * w for w in w2)), *map(line2, rows2)]
    return "\n".join(out + cut_footnote(results))


def cut_footnote(results: dict[str, dict[str, Any]]) -> list[str]:
    """The lines under the table that say what the cut mark means, per marked config (none when nothing was cut)."""
    cut = [r for r in config_results(results).values() if truncation.cut_count(r.get("text_cuts"))]
    if not cut:
        return []
    lines = ["", f"{truncation.CUT_MARK} the model's tokenizer cut captions longer than its text context; candidates the "
                 "cut made identical tie, and a tie scores chance (text_cuts in results.json):"]
    for r in cut:
        c = r["text_cuts"]
        lines.append(f"  {r['benchmark']}/{r['config']}: {truncation.cut_count(c)} of {truncation.cut_count(c, 'captions')} "
                     f"captions cut at {truncation.cut_count(c, 'context')} tokens, "
                     f"{truncation.cut_count(c, 'items_identical')} items left with identical candidates")
    return lines


__all__ = ["Pair", "RESULTS_FILE", "benchmark_entry", "benchmark_names", "config_results", "format_table",
           "is_config_result", "plan", "run_model", "sample_videos",
           "table_rows", "video_cell"]
