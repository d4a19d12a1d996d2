"""PoSRank generation throughput next to the bare spaCy tagging pass on the same captions.

Prints captions/s of `nlp.pipe` alone (the anchor), of generation for each part of speech,
and of the whole five-part generation, with each one's cost as a multiple of the anchor
(target: whole generation <= 1.5x bare tagging). Generation includes its own tagging pass.
"x bare" is best of --repeats (WordNet synsets parsed by then, as in any long run);
"x first" is the first pass, which also pays for parsing the WordNet entries it touches.

    python3 perf/bench_generate.py [--captions FILE] [--n 2000] [--vocabulary FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from hardneg.generators.posrank import PosRankBatchFn, load_vocabulary, vocabulary_from_docs
from hardneg.resources import load_spacy, load_wordnet
from hardneg.schema import PARTS_OF_SPEECH

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "posrank_uvo"


def read_captions(path: Path, n: int) -> list[str]:
    lines = [ln.rstrip("\n") for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    caps = [ln.split("**#**", 1)[-1] for ln in lines]
    if not caps:
        raise SystemExit(f"{path} holds no captions")
    while len(caps) < n:
        caps += caps
    return caps[:n]


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captions", type=Path, default=REALDATA / "captions.txt",
                    help="one caption per line (VLN-UVO 'id**#**caption' lines accepted)")
    ap.add_argument("--n", type=int, default=2000, help="captions to time")
    ap.add_argument("--vocabulary", type=Path, default=None,
                    help="{pos: [words]} JSON; default: built from the captions (not timed)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    args = ap.parse_args()

    caps = read_captions(args.captions, args.n)
    ids = [str(i) for i in range(len(caps))]
    nlp, wn = load_spacy(("parser", "ner")), load_wordnet()
    list(nlp.pipe(caps[:200], batch_size=args.batch_size))  # warm-up
    vocab = (load_vocabulary(args.vocabulary) if args.vocabulary
             else vocabulary_from_docs(nlp.pipe(caps, batch_size=args.batch_size)))
    wn.synsets("dog")  # load the WordNet index before timing
    from hardneg.generators.inflection import inflect

    inflect("be", "VBZ")  # lemminflect's tables: a one-time load per worker, like the tagger

    def bare_pass() -> None:
        list(nlp.pipe(caps, batch_size=args.batch_size))

    # The machine may be shared: each generation pass is timed right after its own bare pass,
    # best of --repeats for both, so a load change between passes hits both sides alike.
    print(f"{len(caps)} captions from {args.captions.name}; spaCy {nlp.meta['name']}-{nlp.meta['version']}")
    print(f"{'pass':<24}{'captions/s':>12}{'bare c/s':>10}{'x bare':>9}{'x first':>9}{'rows':>7}")
    results: dict = {}
    # the whole generation first: its first pass is the cold one (WordNet synsets not yet parsed)
    for label, parts in [("all five (PoSRank)", list(PARTS_OF_SPEECH))] + [(p, [p]) for p in PARTS_OF_SPEECH]:
        rows = 0

        def run() -> None:
            nonlocal rows
            fn = PosRankBatchFn(nlp, wn, vocab, parts_of_speech=parts, k=20, seed=0, batch_size=args.batch_size)
            rows = 0
            for i in range(0, len(caps), args.batch_size):
                rows += len(fn({"id": ids[i : i + args.batch_size], "caption": caps[i : i + args.batch_size]})["id"])

        bare_times, gen_times = [], []
        for _ in range(args.repeats):
            bare_times.append(timed(bare_pass))
            gen_times.append(timed(run))
        bare, t = min(bare_times), min(gen_times)
        first = gen_times[0] / bare_times[0]
        results[label] = {"captions_per_s": len(caps) / t, "bare_captions_per_s": len(caps) / bare,
                          "x_bare": t / bare, "x_bare_first_pass": first, "rows": rows}
        print(f"{label:<24}{len(caps) / t:>12.0f}{len(caps) / bare:>10.0f}{t / bare:>9.2f}{first:>9.2f}{rows:>7}")
    ratio = results["all five (PoSRank)"]["x_bare"]
    cold = results["all five (PoSRank)"]["x_bare_first_pass"]
    print(f"whole PoSRank generation = {ratio:.2f}x bare tagging, best of {args.repeats} (target <= 1.5x): "
          f"{'met' if ratio <= 1.5 else 'NOT met'}; first, cold-WordNet pass: {cold:.2f}x")
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
