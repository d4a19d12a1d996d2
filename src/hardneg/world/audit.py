"""Ground truth for any negative generator: judge the negatives it makes for the world's captions.

`judge_negative` sorts one generated "negative" of a scene's caption into
    true           a caption of the world's grammar, true of the video: a false negative
    synonym-true   English, and true once its words are read through the closed vocabulary's truth
                   tables (`hardneg.world.english.TABLES`: synonyms such as "big", "winks", hypernyms
                   such as "polygon", "figure"): a false negative in English
    false          English and false of the video. The world is closed, so a word no table lists
                   ("groin", "ripe") names something the world does not hold: false, and listed
                   by `unknown_words` so that such verdicts can be counted
    ungrammatical  not English, judged by English classes and not by the world's template (a verb
                   where a noun belongs, "it shrink", "a orange"); "rotates slowly left" is English
                   (and false: the world's direction rule is a fact, not grammar)
    unknown        kept in `VERDICTS` for older records; never given to a variant of a world caption
`audit_rows` does it for the rows a generator returns (`hardneg.schema.MC_ITEM_SCHEMA`) and
`summarize` counts per generator and part of speech, with cluster-bootstrap intervals over
captions (`perf/bench_world_generators.py` prints the README table).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping

from hardneg.world.truth import FALSE, TRUE, judge

VERDICTS = ("true", "synonym-true", "false", "unknown", "ungrammatical")
#: function words of every caption
FUNCTION_WORDS = frozenset({"a", "an", "then", "it", ","})
_WORD = re.compile(r"[a-z]+")


def unknown_words(text: str) -> list[str]:
    """Words no truth table of `hardneg.world.english.TABLES` lists (the closed world reads them as true of
    nothing): reported, so that each "false" that rests on the closed vocabulary can be seen."""
    from hardneg.world.english import TABLES, table_kinds

    in_phrases = {w for phrase in TABLES["relation"] for w in phrase.split()}
    return [w for w in _WORD.findall(text.lower())
            if w not in FUNCTION_WORDS and w not in in_phrases and not table_kinds(w)]


def with_synonyms_read(text: str) -> str:
    """`text` with every one-to-one synonym of the truth tables replaced by the world's word."""
    from hardneg.world.english import TABLES

    one = {w: next(iter(v)) for k, t in TABLES.items() if k != "relation" for w, v in t.items() if len(v) == 1}
    return _WORD.sub(lambda m: one.get(m.group(0), m.group(0)), text.lower())


def judge_negative(scene, text: str, tagger=None) -> str:
    """"true", "synonym-true", "false" or "ungrammatical" (see the module docstring); never "unknown" for a
    variant of the scene's caption: the world is closed, so every English word is true or false of it."""
    from hardneg.world.english import holds, read

    verdict = judge(scene, text).value
    if verdict == TRUE:
        return "true"
    if verdict == FALSE:
        return "false"
    reading = read(text, scene.caption, tagger)
    if isinstance(reading, str):
        return "ungrammatical"
    return "synonym-true" if holds(scene, reading) else "false"


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
