"""PoSRank: one JSON per dataset and part of speech, joined to the dataset's caption file.

`<dataset>_<split>_<pos>_RE<K>.json` maps `"<video>#<i>"` or `"<video>##*##<i>"` to
`{"0": negative, ..., "<K-1>": negative}` (K = 20). The positive caption is not in
the JSON: it comes from the dataset's captions (VLN-UVO ships `captions.txt`, lines
`<video>##*##<i>**#**<caption>`; for other datasets put `<dataset>_captions.txt` in
the same format, or `<dataset>_captions.json` mapping key -> caption, next to them).
"""

from __future__ import annotations

import re
from pathlib import Path

from hardneg.datasets.hub_layout import BenchmarkBuild, ConfigData, release_build
from hardneg.datasets.raw_common import AUTHORS_RELEASE, RawFormatError, load_json_strict, mc_table, provenance, single_word_diff
from hardneg.schema import PARTS_OF_SPEECH

FILE_PATTERN = re.compile(r"^(?P<dataset>[A-Za-z0-9]+)_(?P<split>[A-Za-z0-9]+)_(?P<pos>[A-Za-z]+)_RE(?P<k>\d+)\.json$")
POS_ALIASES = {
    "noun": "noun",
    "verb": "verb",
    "adj": "adj",
    "adjective": "adj",
    "adv": "adv",
    "adverb": "adv",
    "prep": "prep",
    "preposition": "prep",
}
#: dataset token in the file name -> (config name, source_dataset)
DATASETS = {"uvo": ("vln_uvo", "uvo"), "oops": ("vln_oops", "oops"), "msrvtt": ("msrvtt", "msrvtt"), "vatex": ("vatex", "vatex")}
CAPTION_SEPARATOR = "**#**"
GENERATOR = "posrank-single-word"



def split_key(key: str, path: Path, row: int | str) -> tuple[str, int]:
    """(video id, caption index) of a `<video>#<i>` or `<video>##*##<i>` key."""
    video, sep, index = key.rpartition("##*##")
    if not sep:
        video, sep, index = key.rpartition("#")
    if not sep or not video or not index.strip().isdigit():
        raise RawFormatError(path, f"key {key!r} is not '<video>#<i>' or '<video>##*##<i>'", "keys name a video and the index of its caption", row)
    return video, int(index)


def read_captions(path: Path) -> dict[tuple[str, int], str]:
    """Positive captions keyed by (video, index)."""
    out: dict[tuple[str, int], str] = {}
    if path.suffix == ".json":
        data = load_json_strict(path)
        if not isinstance(data, dict):
            raise RawFormatError(path, "top level is not an object", "map '<video>#<i>' keys to caption strings")
        items = [(k, v, k) for k, v in data.items()]
    else:
        items = []
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                line = line.rstrip("\n").rstrip("\r")
                if not line.strip():
                    continue
                key, sep, caption = line.partition(CAPTION_SEPARATOR)
                if not sep:
                    raise RawFormatError(path, f"no '{CAPTION_SEPARATOR}' separator", f"lines are '<video>##*##<i>{CAPTION_SEPARATOR}<caption>'", line_no)
                items.append((key, caption, line_no))
    for key, caption, where in items:
        vk = split_key(key, path, where)
        if not isinstance(caption, str) or not caption.strip():
            raise RawFormatError(path, f"missing caption for {key!r}", "fill in the caption", where)
        if vk in out:
            raise RawFormatError(path, f"duplicate caption key {key!r}", "keep one line per caption", where)
        out[vk] = caption.strip()
    return out


def find_captions(raw: Path, dataset: str) -> Path:
    for name in (f"{dataset}_captions.txt", f"{dataset}_captions.json", "captions.txt", "captions.json"):
        if (raw / name).exists():
            return raw / name
    raise FileNotFoundError(
        f"{raw}: no captions file for PoSRank dataset {dataset!r}; put {dataset}_captions.txt "
        f"(lines '<video>##*##<i>{CAPTION_SEPARATOR}<caption>') or captions.txt next to the negatives JSON"
    )


def read_negatives(path: Path, captions: dict, captions_path: Path, config: str, source: str, split: str, pos: str, k: int):
    """Items of one PoSRank JSON: the positive first, then its K negatives in the file's order."""
    data = load_json_strict(path)
    if not isinstance(data, dict):
        raise RawFormatError(path, "top level is not an object", "the file maps caption keys to {'0': negative, ...}")
    wanted = [str(j) for j in range(k)]
    items, where = [], []
    equal_to_positive = 0
    for key, negs in data.items():
        video, index = split_key(key, path, key)
        if not isinstance(negs, dict) or sorted(negs, key=lambda s: (len(s), s)) != wanted:
            got = sorted(negs, key=lambda s: (len(s), s)) if isinstance(negs, dict) else type(negs).__name__
            raise RawFormatError(path, f"{key!r} has negatives {got}, expected keys '0'..'{k - 1}'", f"exactly {k} negatives per caption", key)
        if (video, index) not in captions:
            raise RawFormatError(path, f"caption {key!r} is not in {captions_path.name}", "use the captions file of the same dataset release", key)
        positive = captions[(video, index)]
        negatives = []
        for j in wanted:
            neg = negs[j]
            if not isinstance(neg, str) or not neg.strip():
                raise RawFormatError(path, f"{key!r}: negative {j} is missing or empty", "re-download the file", key)
            negatives.append(neg.strip())
        equal_to_positive += sum(n == positive for n in negatives)
        prov = [provenance("positive", details={"source": f"{captions_path.name}"})]
        for n in negatives:
            span, replacement = single_word_diff(positive, n)
            prov.append(provenance("generator", generator=GENERATOR, generator_version=AUTHORS_RELEASE, pos=pos, span=span, replacement=replacement))
        items.append(
            {
                "id": f"{config}:{pos}:{video}#{index}",
                "video_id": video,
                "source_dataset": source,
                "source_split": split,
                "category": pos,
                "captions": [positive, *negatives],
                "label": 0,
                "manipulated_index": None,
                "negative_types": ["positive"] + [pos] * k,
                "provenance": prov,
            }
        )
        where.append(key)
    if not items:
        raise RawFormatError(path, "no captions in the file", "re-download the file")
    return items, where, equal_to_positive


def parse(raw: Path) -> BenchmarkBuild:
    """Validate and convert every `<dataset>_<split>_<pos>_RE<K>.json` in `raw`."""
    files = sorted(p for p in raw.glob("*.json") if FILE_PATTERN.match(p.name))
    if not files:
        raise FileNotFoundError(f"{raw}: no PoSRank file found; expected <dataset>_<split>_<pos>_RE20.json (e.g. uvo_val_adverb_RE20.json)")
    per_config: dict[str, dict[str, tuple]] = {}
    report: dict = {"negatives_per_caption": {}, "negatives_equal_to_positive": {}, "captions_joined": {}, "single_word_diffs": {}}
    raw_files: list[str] = []
    caption_cache: dict[Path, dict] = {}
    for path in files:
        m = FILE_PATTERN.match(path.name)
        token = m["dataset"].lower()
        pos = POS_ALIASES.get(m["pos"].lower())
        if pos is None:
            raise RawFormatError(path, f"part of speech {m['pos']!r} is unknown", f"name the file with one of {sorted(POS_ALIASES)}")
        config, source = DATASETS.get(token, (token, token))
        cap_path = find_captions(raw, token)
        if cap_path not in caption_cache:
            caption_cache[cap_path] = read_captions(cap_path)
            raw_files.append(cap_path.name)
        k = int(m["k"])
        items, where, equal = read_negatives(path, caption_cache[cap_path], cap_path, config, source, m["split"].lower(), pos, k)
        if pos in per_config.setdefault(config, {}):
            raise RawFormatError(path, f"a second file for {config}/{pos} (first: {per_config[config][pos][0].name})", "keep one file per dataset and part of speech")
        per_config[config][pos] = (path, items, where)
        raw_files.append(path.name)
        label = f"{config}/{pos}"
        report["negatives_per_caption"][label] = k
        report["negatives_equal_to_positive"][label] = equal
        report["captions_joined"][label] = len(items)
        diffs = [p["span"] is not None and len(p["span"].split()) == 1 and len((p["replacement"] or "").split()) == 1 for it in items for p in it["provenance"][1:]]
        report["single_word_diffs"][label] = f"{sum(diffs)}/{len(diffs)}"
    # one `test` split per config; the part of speech is the `category` column (builds before 0.2 used it
    # as the split name: see the declaration's limitations for the migration)
    import pyarrow as pa

    configs = []
    for config in sorted(per_config):
        tables = [mc_table(items, path, where) for pos in PARTS_OF_SPEECH if pos in per_config[config]
                  for path, items, where in [per_config[config][pos]]]
        configs.append(ConfigData(config, {"test": pa.concat_tables(tables)},
                                  "positive + 20 single-word negatives; part of speech in `category`"))
    return release_build("posrank", configs, raw_files, report)
