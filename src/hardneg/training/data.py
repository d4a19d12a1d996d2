"""What a training run reads: (video, caption) pairs, their frames, and hard negatives per caption.

Pairs come from a built benchmark's `train` split (any benchmark whose build has one: the
positive caption of each item, or each query of a retrieval config) or from a folder of
video-caption pairs (`captions.jsonl` / `captions.csv` with `video_id` and `caption`, videos
beside it or in `videos/`). Frames are decoded once, through the scoring path
(`hardneg.decoding`: a pool of decoding processes), and kept in memory as uint8.

Negatives come from a generator run on the fly (`hardneg.generators`, e.g. `posrank`,
`posrank_phrase`, `llm_teacher`) or from a precomputed Parquet file of generator output
(`MC_ITEM_SCHEMA` rows: `captions[label]` is the positive, the rest its negatives, `category` the
part of speech). Either way they are matched to the training captions by the positive's text
and grouped by category, so Eq. 3 can take N per part of speech.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

PAIR_FILES = ("captions.jsonl", "captions.csv", "pairs.jsonl", "pairs.csv")


@dataclass
class Pairs:
    """Training pairs and where they came from."""

    video_ids: list[str]
    captions: list[str]
    source: dict[str, Any]
    videos: Path | None = None

    def __len__(self) -> int:
        return len(self.captions)


def _read_pair_file(path: Path) -> list[tuple[str, str]]:
    rows: list[dict[str, Any]] = []
    if path.suffix == ".jsonl":
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path} line {n}: not JSON ({exc})") from exc
    else:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    out = []
    for n, r in enumerate(rows, 1):
        vid, cap = r.get("video_id"), r.get("caption")
        if not vid or not isinstance(cap, str) or not cap.strip():
            raise ValueError(f"{path} row {n}: needs a non-empty 'video_id' and 'caption' (got keys {sorted(r)})")
        out.append((str(vid), cap.strip()))
    return out


def _benchmark_train_pairs(folder: Path) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The train split of a built benchmark: its declared video-caption pairs (`pairs_config`, read by
    `hardneg.items.load_pairs`), else the positive caption of each item of a config with a train split."""
    from hardneg import benchmarks
    from hardneg.items import card_configs, folder_benchmark, load_benchmark
    from hardneg.items import load_pairs as load_declared_pairs

    bench = folder_benchmark(folder)
    configs = card_configs(folder)
    if not configs:
        raise ValueError(f"{folder} is neither a `hardneg build` output nor a folder with one of {PAIR_FILES}")
    decl = benchmarks.get(bench) if bench else None
    if decl is not None and decl.pairs_config and "train" in configs.get(decl.pairs_config, {}):
        table = load_declared_pairs(str(folder), "train", benchmark=bench)
        d = table.to_pydict()
        files = [folder / p for p in configs[decl.pairs_config]["train"]]
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()[:16]
        return (list(dict.fromkeys(zip(d["video_id"], d["caption"]))),
                {"kind": "benchmark", "benchmark": bench, "configs": [decl.pairs_config], "split": "train",
                 "data_revision": f"sha256:{digest}"})
    with_train = [c for c, splits in configs.items() if "train" in splits and not (decl and decl.is_companion(c))]
    if not with_train:
        splits = sorted({s for sp in configs.values() for s in sp})
        having = [n for n, b in benchmarks.all_benchmarks().items() if b.pairs_config]
        raise ValueError(f"{bench or folder} has no train split (its splits: {splits}); train on a benchmark built "
                         f"with one ({', '.join(having) or 'none declared'}) or on a folder of video-caption pairs "
                         "(captions.jsonl)")
    pairs: list[tuple[str, str]] = []
    revisions = {}
    for config in with_train:
        data = load_benchmark(str(folder), config, ["train"], benchmark=bench)
        revisions[config] = data.data_revision
        if data.items is not None:
            items = data.items.to_pydict()
            pairs += [(v, caps[lab]) for v, caps, lab in zip(items["video_id"], items["captions"], items["label"])]
        else:
            q = data.queries.to_pydict()
            pairs += list(zip(q["video_id"], q["text"]))
    return list(dict.fromkeys(pairs)), {"kind": "benchmark", "benchmark": bench, "configs": with_train,
                                        "split": "train", "data_revision": revisions}


def load_pairs(data: str | Path, videos: str | Path | None = None, limit: int | None = None) -> Pairs:
    """Training pairs from a built benchmark folder (its train split) or a folder/file of pairs."""
    path = Path(data).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"training data {data} not found: give a built benchmark folder (`hardneg build`) "
                                f"or a folder with one of {PAIR_FILES}")
    pair_file = path if path.is_file() else next((path / f for f in PAIR_FILES if (path / f).is_file()), None)
    if pair_file is not None:
        pairs = _read_pair_file(pair_file)
        digest = hashlib.sha256(pair_file.read_bytes()).hexdigest()[:16]
        source = {"kind": "pairs", "path": str(pair_file), "data_revision": f"sha256:{digest}"}
        root = pair_file.parent
    else:
        pairs, source = _benchmark_train_pairs(path)
        source["path"] = str(path)
        root = path
    if not pairs:
        raise ValueError(f"{data}: no training pairs")
    if limit:
        pairs = pairs[: int(limit)]
    if videos is None:
        videos = root / "videos" if (root / "videos").is_dir() else root
    source["n_pairs"] = len(pairs)
    return Pairs([v for v, _ in pairs], [c for _, c in pairs], source, Path(videos).expanduser())


def decode_videos(pairs: Pairs, frames, progress: bool = False) -> tuple[np.ndarray, list[int]]:
    """(V, T, H, W, 3) uint8 frames of every distinct video, and each pair's row in it.

    Every video must decode: a training set with holes is an error naming the first few."""
    from hardneg.decoding import decode_batches
    from hardneg.video import VideoFolder

    folder = VideoFolder(pairs.videos)
    distinct = list(dict.fromkeys(pairs.video_ids))
    paths, missing = [], []
    for v in distinct:
        p = folder.path(v)
        (missing.append(v) if p is None else paths.append(p))
    if missing:
        raise FileNotFoundError(f"{len(missing)} training video(s) not found in {pairs.videos} (e.g. {missing[:3]}); "
                                "pass the folder that holds them with --videos")
    out: list[np.ndarray] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(paths), desc="decode videos", unit="video")
    for chunk in decode_batches(paths, frames):  # the pool of decoding processes, in order
        for p, got in zip(paths[len(out):], chunk):
            if isinstance(got, Exception):
                raise ValueError(f"training video {p} cannot be decoded: {got}")
            out.append(np.asarray(got))
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    shapes = {a.shape for a in out}
    if len(shapes) != 1:
        raise ValueError(f"training videos decode to different shapes {sorted(shapes)[:3]}: set --resize so frames "
                         "share one size")
    row = {v: i for i, v in enumerate(distinct)}
    return np.stack(out), [row[v] for v in pairs.video_ids]


# --------------------------------------------------------------------------------- negatives


@dataclass
class Negatives:
    """Negative captions per training caption, by category (part of speech, 'phrase', 'verb' ...)."""

    by_caption: dict[str, dict[str, list[str]]]
    source: dict[str, Any] = field(default_factory=dict)

    def coverage(self, captions: list[str]) -> float:
        return float(np.mean([c in self.by_caption for c in captions])) if captions else 0.0


def negatives_from_table(table: pa.Table, source: dict[str, Any]) -> Negatives:
    cols = table.column_names
    for c in ("captions", "label"):
        if c not in cols:
            raise ValueError(f"negatives table has no column {c!r} (columns {cols}); give generator output "
                             "(hardneg generate) with captions, label and category")
    d = table.to_pydict()
    cats = d.get("category") or [None] * len(d["captions"])
    out: dict[str, dict[str, list[str]]] = {}
    for caps, lab, cat in zip(d["captions"], d["label"], cats):
        pos = caps[lab]
        slot = out.setdefault(pos, {}).setdefault(cat or "negative", [])
        slot.extend(c for i, c in enumerate(caps) if i != lab and c != pos and c not in slot)
    return Negatives(out, source)


def read_negatives(path: str | Path) -> Negatives:
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"negatives file {path} not found: give a Parquet file of generator output "
                                "or a generator name (posrank, posrank_phrase, llm_teacher, ...)")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    meta = pq.read_schema(path).metadata or {}
    recorded = meta.get(b"hardneg")
    source = {"kind": "parquet", "path": str(path), "sha256": digest}
    if recorded:
        try:
            source["recorded"] = json.loads(recorded)
        except json.JSONDecodeError:
            pass
    return negatives_from_table(pq.read_table(path), source)


def generate_negatives(generator: str, captions: list[str], settings: Mapping[str, Any], out: Path,
                       progress: bool = False, batch_size: int = 256) -> Negatives:
    """Run generator `generator` on the distinct training captions; keep its output in `out` (Parquet).

    A rerun (resume) with the same generator, settings and captions reads `out` back instead."""
    from hardneg.generators import generator_factory, generator_info
    from hardneg.generators.common import to_mc_table
    from hardneg.io import atomic_write_parquet

    distinct = sorted(set(captions))
    settings = dict(settings)
    given_vocabulary = "vocabulary" in settings
    record_name, version = generator_info(generator)
    if generator in ("posrank", "posrank_phrase") and "vocabulary" not in settings:
        settings["vocabulary"] = caption_vocabulary(distinct)
    key = hashlib.sha256(json.dumps([generator, version, settings, distinct], sort_keys=True, default=str).encode()).hexdigest()[:16]
    source = {"kind": "generator", "generator": generator, "record_name": record_name, "version": version,
              "settings": {k: v for k, v in settings.items() if k != "vocabulary"}, "key": key,
              "vocabulary": "given" if given_vocabulary else "from the training captions"}
    if out.is_file() and (pq.read_schema(out).metadata or {}).get(b"hardneg-train-key") == key.encode():
        return negatives_from_table(pq.read_table(out), source)
    fn = generator_factory(generator)(**settings)
    tables = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(distinct), desc=f"negatives ({generator})", unit="caption")
    for i in range(0, len(distinct), batch_size):
        chunk = distinct[i:i + batch_size]
        got = fn({"id": [f"c{i + j}" for j in range(len(chunk))], "caption": chunk})
        tables.append(to_mc_table(got))
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    table = pa.concat_tables(tables) if tables else None
    if table is None or table.num_rows == 0:
        raise ValueError(f"generator {generator} made no negatives for the {len(distinct)} training captions; "
                         "check its settings (--negatives-set) or give precomputed negatives (Parquet)")
    meta = {b"hardneg-train-key": key.encode(), b"hardneg": json.dumps(source, default=str).encode()}
    atomic_write_parquet(table.replace_schema_metadata(meta), out)
    return negatives_from_table(table, source)


def caption_vocabulary(captions: list[str]) -> dict[str, list[str]]:
    """PoSRank's corpus vocabulary ({pos: [lemmas]}) of the training captions (its last candidate tier)."""
    from hardneg.generators.posrank import vocabulary_from_docs
    from hardneg.resources import load_spacy

    vocab = vocabulary_from_docs(load_spacy(("parser", "ner")).pipe(captions, batch_size=256))
    return {p: list(v) for p, v in vocab.items()}
