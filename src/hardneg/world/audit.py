"""Ground truth for any negative generator: judge the negatives it makes for the world's captions.

`judge_negative` sorts one generated "negative" of a scene's caption into
    true           it is true of the video: a false negative
    synonym-true   true once English synonyms of the world's words are read as those words
                   ("a big red square" for "a large red square"): a false negative in English
    false          grammatical and false: a valid negative
    unknown        it uses a word the world does not know ("rectangle", "groin"): the world cannot
                   say whether it is true
    ungrammatical  only the world's words (or their other forms: "shrink", "an"), but not a caption
                   of its grammar ("moves slowly red", "it shrink quickly")
`audit_rows` does it for the rows a generator returns (`hardneg.schema.MC_ITEM_SCHEMA`) and
`summarize` counts per generator and part of speech, with cluster-bootstrap intervals over
captions (`perf/bench_world_generators.py` prints the README table).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping

from hardneg.world import vocab
from hardneg.world.truth import FALSE, TRUE, judge

VERDICTS = ("true", "synonym-true", "false", "unknown", "ungrammatical")
#: English words the world knows under another name (the audit's reading, not the grammar's): a negative
#: that is true once these are replaced is a false negative in English
SYNONYMS = {
    "big": "large", "huge": "large", "little": "small", "tiny": "small", "gray": "grey", "violet": "purple",
    "disc": "circle", "disk": "circle", "rhombus": "diamond", "loop": "ring",
    "turns": "rotates", "spins": "rotates", "revolves": "rotates", "expands": "grows", "enlarges": "grows",
    "contracts": "shrinks", "flashes": "blinks", "flickers": "blinks", "trembles": "shakes", "vibrates": "shakes",
    "jiggles": "shakes", "hops": "bounces", "throbs": "pulses", "dims": "fades", "sways": "wobbles",
    "travels": "moves", "goes": "moves", "fast": "quickly", "rapidly": "quickly", "swiftly": "quickly",
    "speedily": "quickly", "slow": "slowly", "gradually": "slowly", "upward": "up", "upwards": "up",
    "downward": "down", "downwards": "down", "leftward": "left", "rightward": "right", "over": "above",
    "under": "below", "beneath": "below", "underneath": "below", "alongside": "beside",
}
_WORD = re.compile(r"[a-z]+")
#: every word a caption of the world can hold
LEXICON = frozenset({w for words in vocab.SLOT_WORDS.values() for phrase in words for w in phrase.split()}
                    | {"a", "then", "it"})


def _known_form(word: str) -> bool:
    """A word of the world, or another form of one ("shrink" for "shrinks", "squares", "an" for "a")."""
    return (word in LEXICON or word == "an" or f"{word}s" in LEXICON or f"{word}es" in LEXICON
            or (word.endswith("s") and word[:-1] in LEXICON))


def unknown_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if not _known_form(w) and w not in SYNONYMS]


def with_synonyms_read(text: str) -> str:
    """`text` with every synonym of `SYNONYMS` replaced by the world's word."""
    return _WORD.sub(lambda m: SYNONYMS.get(m.group(0), m.group(0)), text.lower())


def judge_negative(scene, text: str) -> str:
    """"true", "synonym-true", "false", "unknown" or "ungrammatical" (see the module docstring)."""
    verdict = judge(scene, text).value
    if verdict == TRUE:
        return "true"
    if verdict == FALSE:
        return "false"
    read = with_synonyms_read(text)
    if read != text.lower():
        again = judge(scene, read).value
        if again == TRUE:
            return "synonym-true"
        if again == FALSE:
            return "false"
    return "unknown" if unknown_words(text) else "ungrammatical"


def audit_rows(scenes: Mapping[str, Any], rows: Iterable[Mapping[str, Any]], generator: str) -> list[dict]:
    """One record per generated negative: generator, part of speech (the row's category), caption id, verdict."""
    out = []
    for row in rows:
        scene = scenes[row["video_id"]]
        label = row["label"]
        for j, (text, kind) in enumerate(zip(row["captions"], row["negative_types"])):
            if j == label:
                continue
            out.append({"generator": generator, "pos": row.get("category") or kind, "caption_id": row["video_id"],
                        "negative": text, "verdict": judge_negative(scene, text),
                        "unknown_words": unknown_words(text)})
    return out


def summarize(records: list[dict], n_resamples: int = 1000, seed: int = 0) -> list[dict]:
    """Per (generator, part of speech): counts, shares of each verdict and of false negatives (true or
    synonym-true) with 95% intervals (clusters: captions), the share of captions with at least one false
    negative (and with at least one ungrammatical one), and the most frequent unknown words."""
    import numpy as np

    from hardneg.ranking import bootstrap_ci

    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        groups[(r["generator"], r["pos"])].append(r)
    table = []
    for (gen, pos), recs in sorted(groups.items()):
        clusters = np.asarray([r["caption_id"] for r in recs], dtype=object)
        row: dict[str, Any] = {"generator": gen, "pos": pos, "captions": len(set(clusters.tolist())),
                               "negatives": len(recs)}
        for v in VERDICTS:
            values = np.asarray([r["verdict"] == v for r in recs], dtype=np.float64)
            ci = bootstrap_ci(values, clusters, n_resamples=n_resamples, seed=seed) if n_resamples else None
            row[v] = float(values.mean())
            row[f"{v}_ci"] = (ci.low, ci.high) if ci else None
        for key, verdicts in (("captions_with_false_negative", ("true", "synonym-true")),
                              ("captions_with_ungrammatical", ("ungrammatical",))):
            by_caption: dict[str, bool] = defaultdict(bool)
            for r in recs:
                by_caption[r["caption_id"]] |= r["verdict"] in verdicts
            row[key] = sum(by_caption.values()) / len(by_caption)
        fn = np.asarray([r["verdict"] in ("true", "synonym-true") for r in recs], dtype=np.float64)
        ci = bootstrap_ci(fn, clusters, n_resamples=n_resamples, seed=seed) if n_resamples else None
        row["false_negative"], row["false_negative_ci"] = float(fn.mean()), ((ci.low, ci.high) if ci else None)
        row["top_unknown"] = Counter(w for r in recs for w in r["unknown_words"]).most_common(5)
        table.append(row)
    return table
