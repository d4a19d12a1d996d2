"""Ground truth for the project's negative generators: how often a generated "negative" of a world
caption is in fact TRUE of the video (a false negative), and how often it is not a caption of the
world's grammar (an unknown word, or the world's words in the wrong place).

Each generator runs, with its published recipe's settings, on the true captions of N test scenes of
the synthetic world (`hardneg.world`); every negative is judged against its scene by the world's
truth checker (`hardneg.world.audit`). The PoSRank paper (Chen et al., ACCV 2024, Sec. 4) estimates
by hand "only 4 false negatives and 7 grammatical errors" in a random subset of 100 captions.

Generators that need model weights this machine does not have (verb_phrase: T5 + GPT-2;
llm_teacher: XLM-RoBERTa) are tried with their default Hub ids and listed as not run, with the
reason, when the weights cannot be loaded.

    python3 perf/bench_world_generators.py [--n 300] [--seed 0] [--json OUT.json] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "generators"


def recipe_settings(name: str) -> dict:
    import yaml

    return dict(yaml.safe_load((RECIPES / f"{name}.yaml").read_text())["settings"])


def runs(vocabulary: dict) -> list[tuple[str, str, dict]]:
    """(label, generator, settings) for every run: the recipes the project publishes, on the world's vocabulary."""
    out = [("posrank (defaults)", "posrank", {"vocabulary": vocabulary, "k": 20})]
    for pos, recipe in (("noun", "noun"), ("verb", "verb"), ("adj", "adjective"), ("adv", "adverb"),
                        ("prep", "preposition")):
        out.append((f"posrank (posrank_uvo_{recipe})", "posrank", {**recipe_settings(f"posrank_uvo_{recipe}"),
                                                                    "vocabulary": vocabulary}))
    out.append(("posrank_phrase (posrank_phrase_training)", "posrank_phrase",
                {**recipe_settings("posrank_phrase_training"), "vocabulary": vocabulary}))
    out.append(("verb_phrase (contrast_verb_lm_msrvtt)", "verb_phrase",
                {**recipe_settings("contrast_verb_lm_msrvtt"), "verb_counts": None, "min_verb_count": 0}))
    out.append(("llm_teacher (feint6k_llm_teacher)", "llm_teacher", recipe_settings("feint6k_llm_teacher")))
    return out


def fmt(v: float, ci) -> str:
    return f"{100 * v:.1f}" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="test scenes (captions) to generate negatives for")
    ap.add_argument("--seed", type=int, default=0, help="the world's seed")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples for the intervals")
    ap.add_argument("--json", type=Path, help="also write the table and a sample of records here")
    ap.add_argument("--quick", action="store_true", help="60 scenes, 200 resamples")
    args = ap.parse_args()
    if args.quick:
        args.n, args.resamples = 60, 200
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a missing model fails at once instead of waiting on the network

    from hardneg.generators import generator_factory
    from hardneg.generators.posrank import vocabulary_from_docs
    from hardneg.resources import load_spacy
    from hardneg.schema import PARTS_OF_SPEECH
    from hardneg.world import sample_scene
    from hardneg.world.audit import audit_rows, summarize

    scenes = [sample_scene(args.seed, "test", i) for i in range(args.n)]
    by_id = {s.id: s for s in scenes}
    batch = {"id": [s.id for s in scenes], "caption": [s.text for s in scenes], "video_id": [s.id for s in scenes],
             "source_dataset": ["world"] * len(scenes), "source_split": ["test"] * len(scenes)}
    # the paper's "dataset vocabulary": the world's own captions (a word of each part of speech it uses)
    vocabulary = {p: list(v) for p, v in vocabulary_from_docs(load_spacy(("parser", "ner")).pipe(batch["caption"])).items()}
    records, not_run, empty = [], [], []
    for label, name, settings in runs(vocabulary):
        t = time.perf_counter()
        try:
            fn = generator_factory(name)(**settings)
        except Exception as exc:  # weights not on this machine (OSError from transformers), a missing package
            first = str(exc).splitlines()[0][:160] if str(exc) else ""
            offline = isinstance(exc, OSError) and ("connect" in first or "offline" in first.lower())
            not_run.append((label, "model weights not on this machine (offline): "
                            f"{settings.get('model') or settings.get('infill_model')}" if offline
                            else f"{type(exc).__name__}: {first}"))
            print(f"{label}: not run ({not_run[-1][1]})", file=sys.stderr)
            continue
        rows = fn(batch)
        n_rows = len(rows["id"])
        recs = audit_rows(by_id, [{k: rows[k][i] for k in rows} for i in range(n_rows)], label)
        records += recs
        wanted = ["phrase"] if name == "posrank_phrase" else list(settings.get("parts_of_speech", PARTS_OF_SPEECH))
        empty += [(label, p) for p in wanted if not any(r["pos"] == p for r in recs)]
        print(f"{label}: {n_rows} items, {len(recs)} negatives in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    table = summarize(records, n_resamples=args.resamples)
    head = ("generator", "pos", "captions", "negatives", "false negatives %", "of which via synonym %",
            "unknown word %", "ungrammatical %", "valid (false) %", "captions with >=1 FN %",
            "captions with >=1 ungrammatical %")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table:
        lines.append("| " + " | ".join([r["generator"], r["pos"], str(r["captions"]), str(r["negatives"]),
                                        fmt(r["false_negative"], r["false_negative_ci"]),
                                        f"{100 * r['synonym-true']:.1f}", fmt(r["unknown"], r["unknown_ci"]),
                                        fmt(r["ungrammatical"], r["ungrammatical_ci"]), fmt(r["false"], r["false_ci"]),
                                        f"{100 * r['captions_with_false_negative']:.1f}",
                                        f"{100 * r['captions_with_ungrammatical']:.1f}"]) + " |")
    for label, pos in empty:
        lines.append(f"| {label} | {pos} | {args.n} | 0 | no item: no word of this part of speech was a target "
                     "(spaCy's tags; stop words are never targets) | | | | | | |")
    for label, why in not_run:
        lines.append(f"| {label} | all | {args.n} | not run | {why} | | | | | | |")
    print(f"World seed {args.seed}, {args.n} test captions; 95% intervals resample captions "
          f"({args.resamples} resamples). PoSRank paper, by hand: 4 false negatives and 7 grammatical errors "
          "in 100 captions.")
    print("\n".join(lines))
    print("\nmost frequent unknown words per run and part of speech:")
    for r in table:
        if r["top_unknown"]:
            print(f"  {r['generator']} / {r['pos']}: " + ", ".join(f"{w} ({n})" for w, n in r["top_unknown"]))
    if args.json:
        from hardneg.io import atomic_write_text

        examples = {}
        for rec in records:
            examples.setdefault((rec["generator"], rec["pos"], rec["verdict"]), rec)
        atomic_write_text(args.json, json.dumps({"n": args.n, "seed": args.seed, "table": table, "not_run": not_run,
                                                 "examples": list(examples.values())}, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
