"""Score a video-text model on a benchmark and write the predictions file.

Scoring is a pure function over batches of items (`make_batch_fn`), built once per worker
(the model loads there), and mapped by the shared runner (`hardneg.runner.run_map`), so
the same code runs in this process, in a process pool, or on Ray, and resumes after an
interruption. Video embeddings go to an on-disk cache keyed by the model's identity
(id + revision + adapter + dtype), the frame settings and the video file's content hash:
a rerun, or a second benchmark over the same videos, decodes and encodes nothing again.

Multiple-choice benchmarks (Feint6K, contrast sets, PoSRank) give one row per item;
retrieval (FIRE) gives one row per query with a score for every video of the collection.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hardneg import __version__
from hardneg.io import OutputExistsError, atomic_write_bytes, atomic_write_parquet, refuse_overwrite
from hardneg.items import BenchmarkData, is_hub_id, load_benchmark
from hardneg.resources import cache_dir as default_cache_dir
from hardneg.schema import PREDICTIONS_SCHEMA, predictions_metadata, read_predictions_metadata
from hardneg.truncation import check_items, tie_identical
from hardneg.decoding import decode_batches
from hardneg.frames_used import frames_used, frames_used_record, sampling_rule
from hardneg.settings import Execution, ModelSpec, ScoreJob
from hardneg.video import FrameSettings, UnscorableVideo, VideoFolder, VideoReport, file_fingerprint

# -------------------------------------------------------------------------------------- cache


class EmbeddingCache:
    """Video embeddings on disk: one .npy per (model identity, frame settings, video content)."""

    def __init__(self, root: str | os.PathLike, model_key: str, frames: FrameSettings):
        frames_key = hashlib.sha256(json.dumps(frames.identity(), sort_keys=True).encode()).hexdigest()[:12]
        self.root = Path(root) / "embeddings" / model_key / frames_key
        self.hits = 0
        self.misses = 0

    def _path(self, fingerprint: str) -> Path:
        return self.root / fingerprint[:2] / f"{fingerprint}.npy"

    def get(self, fingerprint: str) -> np.ndarray | None:
        p = self._path(fingerprint)
        if p.is_file():
            try:
                arr = np.load(p, allow_pickle=False)
            except (OSError, ValueError):  # a damaged entry is recomputed
                return None
            self.hits += 1
            return arr
        return None

    def put(self, fingerprint: str, embedding: np.ndarray) -> None:
        self.misses += 1
        buf = io.BytesIO()
        np.save(buf, np.asarray(embedding, np.float32), allow_pickle=False)
        atomic_write_bytes(self._path(fingerprint), buf.getvalue())


# -------------------------------------------------------------------------------- batch function


@dataclass(frozen=True)
class ScoreSpec:
    """Everything a worker needs to build its batch function (picklable): the model by name (`ModelSpec`, its
    protocol over this benchmark's declaration), the frames, and where the videos and the embedding cache are."""

    model: ModelSpec
    frames: FrameSettings = FrameSettings()
    videos: str | None = None
    cache_dir: str | None = None
    benchmark: str | None = None  # a video LLM's protocol comes from this declaration (`Benchmark.vlm`)


#: what a model raises for one video it cannot take (`hardneg.video.UnscorableVideo`: too many tokens for its context,
#: frame times it cannot place): that video is reported unreadable with the error and the run goes on
UNSCORABLE = (UnscorableVideo,)


def encode_videos(model, folder: VideoFolder | None, video_ids: list[str], frames: FrameSettings,
                  cache: EmbeddingCache | None, report: VideoReport
                  ) -> tuple[dict[str, np.ndarray], dict[str, str], dict[str, bool]]:
    """Embeddings of the given videos (cache first), their status, and whether each came from the cache.

    report: what happened to each video; its `frames_used` is filled with {video id: (frame count, first time s,
    spacing s)} of the frames decoded here (`hardneg.frames_used.frames_used`); a video taken from the cache is not
    decoded and gets none."""
    emb: dict[str, np.ndarray] = {}
    status: dict[str, str] = {}
    cached: dict[str, bool] = {}
    if not model.uses_video:
        for v in video_ids:
            emb[v], status[v], cached[v] = np.zeros(0, np.float32), "not used", False
        return emb, status, cached
    to_decode: list[tuple[str, Path, str]] = []
    for v in dict.fromkeys(video_ids):
        path = folder.path(v) if folder is not None else None
        if path is None:
            report.missing.append(v)
            status[v] = "missing"
            continue
        fp = file_fingerprint(path)
        hit = cache.get(fp) if cache is not None else None
        if hit is not None:
            emb[v], status[v], cached[v] = hit, "ok", True
            report.ok += 1
            continue
        to_decode.append((v, path, fp))

    # the pool of decoding processes (hardneg.decoding) decodes the next videos while the model encodes these
    done = 0
    for got_chunk in decode_batches([e[1] for e in to_decode], frames, device=getattr(model, "device", None)):
        todo: list[tuple[str, str, np.ndarray]] = []
        for (v, _, fp), got in zip(to_decode[done:done + len(got_chunk)], got_chunk):
            if isinstance(got, Exception):  # VideoDecodeError, or a decoder bug on a strange file
                report.unreadable[v] = str(got)
                status[v] = "unreadable"
            else:
                todo.append((v, fp, got))
                report.frames_used[v] = frames_used(got)
        done += len(got_chunk)
        refusal = getattr(model, "video_refusal", None)  # a video LLM: a video longer than its context, before scoring
        for v, _, got in list(todo) if refusal is not None else []:
            try:
                why = refusal(got)
            except UNSCORABLE as exc:  # the model cannot take it at all (its processor said so): as in scoring below
                report.unreadable[v] = str(exc)
                status[v] = "unreadable"
                todo.remove(next(t for t in todo if t[0] == v))
                continue
            if why:
                report.too_long[v] = why
                status[v] = "too long"
                todo.remove(next(t for t in todo if t[0] == v))
        if todo:
            vecs = model.encode_video([t[2] for t in todo])
            for (v, fp, _), vec in zip(todo, vecs):
                if cache is not None:
                    cache.put(fp, vec)
                emb[v], status[v], cached[v] = vec, "ok", False
                report.ok += 1
    return emb, status, cached


_BATCH_OUTPUT_SCHEMA = pa.schema([
    ("id", pa.string()), ("scores", pa.list_(pa.float32())), ("video_id", pa.string()), ("video_status", pa.string()),
    ("video_error", pa.string()), ("video_cached", pa.bool_()), ("skipped", pa.bool_()), ("skip_reason", pa.string()),
    # the frames the video gave (`hardneg.frames_used`): how many, the first one's time and their spacing, seconds
    ("frame_count", pa.int32()), ("frame_first_s", pa.float64()), ("frame_spacing_s", pa.float64()),
])


def make_batch_fn(spec: ScoreSpec, model=None) -> Callable[[dict[str, list]], dict[str, list]]:
    """Build the batch function of one worker: load the model (unless given) and the cache once.

    Input rows carry `id`, `video_id` and either `captions` (multiple choice: returns their
    scores) or nothing else (retrieval collection: the video embedding is cached, no scores).
    Output rows: id, scores, video status, whether the embedding came from the cache, and the
    runner's `skipped`/`skip_reason` for rows whose video is missing or unreadable.
    """
    from hardneg.models import load_model

    if model is None:  # a worker: load, then take the benchmark's protocol (video LLMs; `hardneg.models.prompting`)
        from hardneg.benchmarks import get as declaration
        from hardneg.models.prompting import bind_protocol

        model = load_model(spec.model.model, device=spec.model.device, fp16=spec.model.fp16,
                           revision=spec.model.revision)
        if spec.benchmark:
            bind_protocol(model, declaration(spec.benchmark), *spec.model.how_asked())
    from hardneg.models.vlm.generic import use_processor_kwargs

    use_processor_kwargs(model, spec.frames.processor_kwargs())  # --processor-kwargs (video LLMs' own processor)
    folder = VideoFolder(spec.videos) if (spec.videos and model.uses_video) else None
    cache = EmbeddingCache(spec.cache_dir or default_cache_dir(), model.cache_key(), spec.frames)
    text_memo: dict[str, np.ndarray] = {}

    def text_embeddings(texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in text_memo]
        if new:
            for t, e in zip(new, model.encode_text(new)):
                text_memo[t] = e
        if len(text_memo) > 200_000:  # bounded memory on huge runs
            text_memo.clear()
            return model.encode_text(texts)
        return np.stack([text_memo[t] for t in texts])

    def fn(batch: dict[str, list]) -> dict[str, list]:
        report = VideoReport()
        emb, status, cached = encode_videos(model, folder, batch["video_id"], spec.frames, cache, report)
        out: dict[str, list] = {"id": [], "scores": [], "video_id": [], "video_status": [], "video_error": [],
                                "video_cached": [], "skipped": [], "skip_reason": [], "frame_count": [],
                                "frame_first_s": [], "frame_spacing_s": []}
        has_captions = "captions" in batch
        many: dict[int, np.ndarray] = {}  # a model that scores many items at once (video LLMs batch across videos)
        if has_captions and callable(getattr(model, "similarity_many", None)) and not getattr(model, "wants_items", False):
            todo = [i for i, vid in enumerate(batch["video_id"]) if status.get(vid, "missing") in ("ok", "not used")]
            try:
                got = model.similarity_many([emb[batch["video_id"][i]] for i in todo],
                                            [text_embeddings(list(batch["captions"][i])) for i in todo])
                many = dict(zip(todo, got))
            except UNSCORABLE:  # one video the model cannot take: score the batch item by item, below
                many = {}
        for i, vid in enumerate(batch["video_id"]):
            st = status.get(vid, "missing")
            scores = None
            if i in many:
                scores = np.asarray(many[i], np.float32).tolist()
            elif st in ("ok", "not used") and has_captions:
                caps = list(batch["captions"][i])
                if "provenance" in batch and hasattr(model, "set_item"):  # a protocol that asks the item's question
                    model.set_item({"captions": caps, "provenance": batch["provenance"][i]})
                try:
                    scores = model.similarity(emb[vid][None, :], text_embeddings(caps))[0].astype(np.float32).tolist()
                except UNSCORABLE as exc:  # reported as this video's error; the other videos go on
                    st = status[vid] = "unreadable"
                    report.unreadable[vid] = f"the model could not score it: {type(exc).__name__}: {exc}"[:500]
            out["id"].append(batch["id"][i])
            out["scores"].append(scores)
            out["video_id"].append(vid)
            out["video_status"].append(st)
            out["video_error"].append(report.unreadable.get(vid) or report.too_long.get(vid))
            out["video_cached"].append(bool(cached.get(vid, False)))
            out["skipped"].append(st not in ("ok", "not used"))
            out["skip_reason"].append(None if st in ("ok", "not used") else f"video {st}")
            n, first, spacing = report.frames_used.pop(vid, (None, None, None))  # once per video: its first row
            out["frame_count"].append(n)
            out["frame_first_s"].append(first)
            out["frame_spacing_s"].append(spacing)
        return pa.Table.from_pydict(out, schema=_BATCH_OUTPUT_SCHEMA)

    fn.model = model  # for callers that want the identity without loading twice
    fn.cache = cache
    return fn


# ------------------------------------------------------------------------------------- running


@dataclass
class ScoreRun:
    """What `score_benchmark` did."""

    out: Path
    rows: int
    scored: int
    video_report: dict[str, Any]
    embeddings_computed: int
    embeddings_cached: int
    metadata: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        vr = self.video_report
        return (f"wrote {self.out}: {self.scored}/{self.rows} {'queries' if self.metadata.get('task') == 'retrieval' else 'items'} scored; "
                f"videos {vr['ok']} ok, {vr['missing']} missing, {vr['unreadable']} unreadable"
                f"{', %d too long for the model' % vr['too_long'] if vr.get('too_long') else ''}; "
                f"video embeddings computed {self.embeddings_computed}, from cache {self.embeddings_cached}"
                + self._cuts_text())

    def _cuts_text(self) -> str:
        cuts = self.metadata.get("text_cuts") or {}
        if not cuts.get("captions_cut"):
            return ""
        return (f"; {cuts['captions_cut']} captions cut at the model's {cuts['context']}-token context, "
                f"{cuts['items_identical']} items left with identical candidates (see text_cuts)")


def _run_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _report_from_rows(rows: pa.Table) -> tuple[VideoReport, int, int]:
    report = VideoReport()
    seen: dict[str, tuple[str, str | None, bool]] = {}
    for vid, st, err, c in zip(rows["video_id"].to_pylist(), rows["video_status"].to_pylist(),
                               rows["video_error"].to_pylist(), rows["video_cached"].to_pylist()):
        seen.setdefault(vid, (st, err, bool(c)))
    computed = cached = 0
    for vid, (st, err, c) in seen.items():
        if st == "ok":
            report.ok += 1
            cached += c
            computed += not c
        elif st == "missing":
            report.missing.append(vid)
        elif st == "unreadable":
            report.unreadable[vid] = err or "unreadable"
        elif st == "too long":
            report.too_long[vid] = err or "too long for the model's context"
    return report, computed, cached




#: what makes two predictions files the same run (a rerun of an incomplete one may replace it)
_SAME_RUN = ("task", "benchmark", "config", "split", "data_revision", "model_id", "model", "frames", "hub_id",
             "dataset_path")


def _incomplete_run(out: Path) -> dict | None:
    """{"meta", "ids"} of `out` when it is a predictions file that left items out because videos were missing or
    unreadable (a killed decoding worker once marked valid videos so, issue 36 N9): running the same command again
    may then replace it, since every item it scores is scored again. None otherwise (absent, complete, or not a
    predictions file), and the usual refusal applies."""
    if not out.is_file():
        return None
    try:
        import pyarrow.parquet as pq

        meta = read_predictions_metadata(pq.read_schema(out))
        videos = meta.get("videos") or {}
        left_out = int(videos.get("missing") or 0) + int(videos.get("unreadable") or 0) + int(videos.get("too_long") or 0)
        if not left_out or int(meta.get("rows_scored", -1)) >= int(meta.get("rows_total", 0)):
            return None
        ids = pq.read_table(out, columns=["id"])["id"].to_pylist()
    except Exception:  # noqa: BLE001 (unreadable: not ours to replace without --overwrite)
        return None
    return {"meta": meta, "ids": ids}


def _same_run_or_refuse(out: Path, incomplete: dict, now: dict) -> None:
    old = incomplete["meta"]
    differ = [k for k in _SAME_RUN if old.get(k) != now.get(k)]
    if differ:
        raise OutputExistsError(f"{out} already exists (a run that left some videos out, but with other "
                                f"{', '.join(differ[:4])}); pass --overwrite to replace it, or choose another path")


def check_model_id(model_id: str | None, field: str = "--model-id") -> str | None:
    """`ORG/NAME` as the leaderboard takes it (a Hub namespace, then the name), or None; else a clear error.
    The one model-id guard (`hardneg.guards.model_id`) of every entrance."""
    if model_id is None:
        return None
    from hardneg import guards

    try:
        return guards.model_id(model_id, field)
    except guards.GuardError as exc:
        raise guards.GuardError(field, exc.problem, "give ORG/NAME: " + exc.fix.removeprefix("give ") +
                                ", e.g. alice/my-clip; use local/NAME for a board of your own") from None


def _choose_decoder(frames: FrameSettings, model) -> tuple[FrameSettings, dict[str, Any]]:
    """The frame settings to decode with (an optional decoder that cannot load here falls back to
    "pyav", with a message on standard error) and the provenance of the decoding: the decoder
    asked for, the one used, why it fell back, and how many decoding processes ran."""
    import sys

    from hardneg.decoding import default_backend, resolve_decoder
    from hardneg.pool import default_workers

    requested, fallback = frames.decoder, None
    if model.uses_video and frames.decoder != "pyav":
        frames, fallback = resolve_decoder(frames, getattr(model, "device", None))
        if fallback:
            print(f"warning: {fallback}", file=sys.stderr)
    backend = default_backend(frames)
    info: dict[str, Any] = {"requested": requested, "decoder": frames.decoder, "backend": backend,
                            "workers": default_workers() if backend == "process" else None,
                            "sampling": sampling_rule(frames), "scaler": frames.scaler if frames.decoder != "torchcodec"
                            else "torch-bicubic-antialias"}
    if fallback:
        info["fallback"] = fallback
    return frames, info


def score_benchmark(model: Any, dataset: str, config: str, out: str | os.PathLike, splits: list[str] | None = None,
                    **options: Any) -> ScoreRun:
    """Score `model` on one benchmark config and write the predictions Parquet atomically.

    The keyword arguments are the fields of the settings objects (`hardneg.settings`), by name:
    frames (`hardneg.video.FrameSettings`: how frames are sampled);
    videos, cache_dir, benchmark, data_revision, overwrite (`ScoreJob`); device, fp16, revision, protocol, prompt,
    protocol_set, model_id (`ModelSpec`); batch_size=64, backend, num_workers, ray_address, num_gpus,
    ray_runtime_env, progress=True (`Execution`, or `execution=` the object); loaded_model (the model already loaded
    from `model`). `score` takes the objects themselves.

    protocol, prompt: how a video LLM scores captions (default: the benchmark declaration's; docs/models.md).
    model_id: the name recorded in the file (`ORG/NAME`, what the leaderboard shows; default: the model's own
    name). An interrupted run leaves its finished batches in `<out>.parts-<key>/`; running the same
    command again resumes from there. Settings that change the scores change the key.
    """
    from hardneg.settings import Execution, ModelSpec, ScoreJob, from_keywords, refuse_unknown

    loaded_model = options.pop("loaded_model", None)
    spec = from_keywords(ModelSpec, "score_benchmark", ModelSpec(model), options)
    job = from_keywords(ScoreJob, "score_benchmark", ScoreJob(dataset, config, out, splits), options)
    execution = from_keywords(Execution, "score_benchmark", options.pop("execution", None), options)
    frames = options.pop("frames", None) or FrameSettings()
    refuse_unknown("score_benchmark", options, (ModelSpec, ScoreJob, Execution), also=("frames",))
    return score(job, spec, frames, execution, loaded_model)


def score(job: ScoreJob, spec: ModelSpec, frames: FrameSettings = FrameSettings(),
          execution: Execution = Execution(), loaded_model=None) -> ScoreRun:
    """`score_benchmark` on the settings objects: `job` (what to score, where), `spec` (the model), `frames`,
    `execution` (where the batches run); `loaded_model`: `spec.model` already loaded (`ModelSpec.load`)."""
    from hardneg.runner import read_output, run_map

    out, dataset, config, videos = Path(job.out), job.dataset, job.config, job.videos
    model = spec.model
    model_id = check_model_id(spec.model_id)
    overwrite = job.overwrite
    if spec.prompt is not None:  # given on purpose: an empty one is refused, never replaced by the default (N8)
        from hardneg import guards

        spec = dataclasses.replace(spec, prompt=guards.prompt(spec.prompt))
    incomplete = None if overwrite else _incomplete_run(out)  # a run that left videos out may be run again
    if incomplete is None:
        refuse_overwrite(out, overwrite)
    data = load_benchmark(dataset, config, job.splits, benchmark=job.benchmark, revision=job.data_revision)
    m = loaded_model or spec.load()
    from hardneg.models.prompting import bind_protocol

    bind_protocol(m, data.declaration, *spec.how_asked())  # a video LLM's protocol for this benchmark
    if hasattr(m, "take_generation_report"):
        m.take_generation_report()  # start this benchmark's record of generated answers empty
    if m.uses_video and not videos:
        raise ValueError(f"model {model} needs videos: pass --videos DIR with <video_id>.mp4 files "
                         "(or use a blind baseline such as --model blind-unigram)")
    if m.uses_video:
        from hardneg.video import require_decoder

        require_decoder(frames)  # a missing PyAV is named here, not counted as every video unreadable
    frames, decoding = _choose_decoder(frames, m)
    # a worker loads the model again by its name, with no judge (as before: the judge is this process's)
    worker = ScoreSpec(model=dataclasses.replace(spec, judge=None), frames=frames,
                       videos=str(Path(videos).resolve()) if videos else None,
                       cache_dir=str(Path(job.cache_dir or default_cache_dir()).resolve()), benchmark=data.benchmark)
    key = _run_key({"model": m.identity(), "frames": frames.identity(), "data": data.data_revision,
                    "config": config, "splits": data.splits, "videos": worker.videos, "task": data.task})
    parts = out.with_name(f"{out.name}.parts-{key}")
    if execution.backend == "ray" and not execution.num_gpus and getattr(m, "adapter", None) == "video-llm" \
            and str(getattr(m, "device", "")).startswith("cuda"):
        # a video LLM on Ray: one actor per GPU, never two copies of the model on one card
        execution = dataclasses.replace(execution, num_gpus=1)
    factory = functools.partial(make_batch_fn, worker, m if execution.same_process else None)
    progress = execution.progress
    meta_common = dict(
        task=data.task, benchmark=data.benchmark, config=config, split=",".join(data.splits),
        data_revision=data.data_revision, model_id=model_id or m.model_id, model_revision=m.revision,
        # where the data came from: a Hub id (with the revision above), or a local folder recorded as an
        # absolute path so `hardneg evaluate` works from any folder; local paths are never published
        hub_id=dataset if is_hub_id(str(dataset)) else data.declaration.hub_id,
        dataset_path=None if is_hub_id(str(dataset)) else str(Path(dataset).resolve()),
        model=m.identity(), frames=frames.identity(), hardneg_version=__version__, decoding=decoding,
    )
    board_meta = getattr(m, "board_meta", None)
    if callable(board_meta) and board_meta():  # what the board shows when no Hub card or flag says (issue 41)
        meta_common["model_meta"] = board_meta()
    if incomplete is not None:
        _same_run_or_refuse(out, incomplete, meta_common)
    if progress and m.uses_video:  # a long run says so before it starts (measured costs: hardneg.expected)
        from hardneg.expected import announce

        announce("score", data.items.num_rows if data.task == "multiple_choice" else data.queries.num_rows)
    if data.task == "multiple_choice":
        # a protocol that asks each item's own question (generate-match) reads the item's provenance, never its label
        inp = data.items.select(["id", "video_id", "captions"] + (["provenance"] if getattr(m, "wants_items", False)
                                                                 else []))
        run_map(factory, inp, parts, id_column="id", execution=execution)
        rows = read_output(parts)
        report, computed, cached = _report_from_rows(rows)
        keep = rows.filter(pc.invert(rows["skipped"]))
        order = {i: k for k, i in enumerate(data.items["id"].to_pylist())}
        keep = keep.take(np.argsort([order[i] for i in keep["id"].to_pylist()], kind="stable"))
        cuts = check_items(m, list(zip(data.items["id"].to_pylist(), data.items["captions"].to_pylist())))
        scores = keep["scores"]
        if cuts is not None and cuts.groups:  # candidates the cut made identical tie exactly: chance, never a win
            scores = pa.array([tie_identical(row, cuts.groups[i]) if i in cuts.groups else row
                               for i, row in zip(keep["id"].to_pylist(), scores.to_pylist())], pa.list_(pa.float32()))
        table = pa.table({"id": keep["id"], "scores": scores}, schema=PREDICTIONS_SCHEMA)
        n_rows = data.items.num_rows
        extra: dict[str, Any] = {}
        generated = m.take_generation_report() if hasattr(m, "take_generation_report") else None
        if generated:  # generate-match: answers, how each was decided, the undecided ones listed
            extra["generation"] = generated
    else:
        vids = data.videos.select(["video_id"]).append_column("id", data.videos["video_id"])
        run_map(factory, vids, parts, id_column="id", execution=execution)
        rows = read_output(parts)
        report, computed, cached = _report_from_rows(rows)
        ok = [v for v, st in zip(rows["video_id"].to_pylist(), rows["video_status"].to_pylist()) if st in ("ok", "not used")]
        coll = [v for v in data.videos["video_id"].to_pylist() if v in set(ok)]
        fn = make_batch_fn(worker, m)  # reads the cached embeddings
        emb, _, _ = encode_videos(m, VideoFolder(worker.videos) if m.uses_video else None, coll, frames, fn.cache, VideoReport())
        video_matrix = np.stack([emb[v] for v in coll]) if coll else np.zeros((0, 0), np.float32)
        texts = data.queries["text"].to_pylist()
        cuts = check_items(m, [(q, [t]) for q, t in zip(data.queries["query_id"].to_pylist(), texts)])
        scores = m.similarity(video_matrix, m.encode_text(texts)).T if coll else np.zeros((len(texts), 0))
        table = pa.table({"id": data.queries["query_id"],
                          "scores": pa.array([r.astype(np.float32).tolist() for r in scores], pa.list_(pa.float32()))},
                         schema=PREDICTIONS_SCHEMA)
        n_rows = data.queries.num_rows
        extra = {"video_ids": coll}
    if m.uses_video:  # the frames each video gave, and how they were taken (results' provenance)
        extra["frames_used"] = frames_used_record(rows, frames, decoding)
    meta = dict(meta_common, videos=report.to_dict(), rows_total=n_rows, rows_scored=table.num_rows,
                text_cuts=cuts.to_dict() if cuts is not None else None, **extra)
    said = cuts.message() if cuts is not None else None
    if said:  # never silent: the run's output says it, the file and every result record it
        import sys

        print(f"warning: {data.benchmark}/{config}: {said}", file=sys.stderr)
    table = table.replace_schema_metadata(predictions_metadata(**meta))
    if incomplete is not None:
        lost = set(incomplete["ids"]) - set(table["id"].to_pylist())
        if lost:  # its batches are dropped: a rerun decodes the videos again instead of resuming their failure
            shutil.rmtree(parts, ignore_errors=True)
            raise OutputExistsError(f"{out} already exists and scores {len(lost):,} items this run could not "
                                    f"(e.g. {sorted(lost)[:3]}); it was kept. Pass --overwrite to replace it anyway, "
                                    "or choose another path")
    atomic_write_parquet(table, out)
    shutil.rmtree(parts, ignore_errors=True)
    return ScoreRun(out=out, rows=n_rows, scored=table.num_rows,
                    video_report=report.to_dict(), embeddings_computed=computed, embeddings_cached=cached,
                    metadata=meta)


def read_predictions(path: str | os.PathLike) -> tuple[pa.Table, dict[str, Any]]:
    """The predictions table and its run settings; clear errors for a file that is not one."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"predictions file {path} not found; write one with hardneg score")
    try:
        table = pq.read_table(path)
    except Exception as exc:
        raise ValueError(f"{path} is not a readable Parquet file ({exc})") from exc
    from hardneg.schema import PREDICTIONS_REQUIRED_METADATA, check_columns

    what = f"predictions file {path}"
    check_columns(table, PREDICTIONS_SCHEMA, what)
    fix = "write the file with hardneg score (or hardneg.schema.predictions_metadata)"
    try:
        meta = read_predictions_metadata(table.schema)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: its 'hardneg' metadata is not valid JSON ({exc}); {fix}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{what}: its 'hardneg' metadata is not UTF-8 text; {fix}") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{what}: its 'hardneg' metadata is a JSON {type(meta).__name__}, not an object of run "
                         f"settings ({{\"config\": ..., \"task\": ...}}); {fix}")
    missing = [k for k in PREDICTIONS_REQUIRED_METADATA if k not in meta]
    if missing:
        raise ValueError(f"{what}: its 'hardneg' metadata lacks {missing}; {fix}")
    if meta["task"] not in ("multiple_choice", "retrieval"):
        raise ValueError(f"{what}: metadata 'task' is {meta['task']!r}; expected 'multiple_choice' or 'retrieval'")
    for key in ("benchmark", "config", "split"):
        if not isinstance(meta[key], str):
            raise ValueError(f"{what}: metadata {key!r} must be a string, got {meta[key]!r:.80}")
    if not meta["config"]:
        raise ValueError(f"{what}: metadata 'config' is empty; it must name the dataset config that was scored")
    if meta.get("dataset") is not None and not isinstance(meta["dataset"], str):
        raise ValueError(f"{what}: metadata 'dataset' must be a folder path or Hub id (a string), got {meta['dataset']!r:.80}")
    video_ids = meta.get("video_ids")
    if meta["task"] == "retrieval" or video_ids is not None:
        if not isinstance(video_ids, list) or not all(isinstance(v, str) for v in video_ids):
            raise ValueError(f"{what}: retrieval predictions need metadata 'video_ids', a list of video id strings "
                             f"(the video of each score column); got {video_ids!r:.80}")
        if not video_ids and table.num_rows:
            raise ValueError(f"{what}: metadata 'video_ids' is empty, so no video was scored and nothing can be "
                             "ranked; check that the videos were found when scoring (see its video report)")

    ids = table.column("id")
    if ids.null_count:
        row = int(np.flatnonzero(ids.is_null().to_numpy(zero_copy_only=False))[0])
        raise ValueError(f"{what}: row {row} has no id (null); every row needs the id of the item or query it scores")
    scores = table.column("scores").combine_chunks()
    name = lambda row: repr(ids[int(row)].as_py()[:100])  # noqa: E731
    if scores.null_count:
        row = int(np.flatnonzero(scores.is_null().to_numpy(zero_copy_only=False))[0])
        raise ValueError(f"{what}: row {name(row)} has no score list (null, {scores.null_count} such rows); "
                         "every row needs one score per candidate: rescore it, or drop the row (coverage is reported)")
    flat = pc.list_flatten(scores)
    values = flat.to_numpy(zero_copy_only=False).astype(np.float64, copy=False) if flat.null_count == 0 else None
    bad = (flat.is_null().to_numpy(zero_copy_only=False) if values is None else ~np.isfinite(values))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        row = int(pc.list_parent_indices(scores)[pos].as_py())
        got = "null" if values is None else str(values[pos])
        raise ValueError(f"{what}: row {name(row)} has a {got} score ({int(bad.sum())} such scores); scores must be "
                         "finite numbers: check the model's output for that row")
    if video_ids is not None:
        lengths = pc.list_value_length(scores).to_numpy(zero_copy_only=False)
        off = np.flatnonzero(lengths != len(video_ids))
        if off.size:
            raise ValueError(f"{what}: row {name(off[0])} has {int(lengths[off[0]])} scores but the metadata lists "
                             f"{len(video_ids)} videos; a retrieval row scores every video in 'video_ids'")
    return table, meta


__all__ = ["BenchmarkData", "EmbeddingCache", "ScoreRun", "ScoreSpec", "encode_videos",
           "load_benchmark", "make_batch_fn", "read_predictions", "score", "score_benchmark"]
