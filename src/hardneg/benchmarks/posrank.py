"""PoSRank (Chen et al., ACCV 2024): 20 single-word negatives per caption and part of speech."""

from hardneg.benchmarks.base import Benchmark, Metric, ReportedRow

_T3 = "Chen et al., Beyond Coarse-Grained Matching (PoSRank), Table 3 (average PoSRank)"
_T7 = "Chen et al., Beyond Coarse-Grained Matching (PoSRank), Table 7 (X-CLIP, per part of speech)"
#: the paper's order of the parts of speech in Table 7
_T7_ORDER = ("noun", "adj", "verb", "adv", "prep")


def _mean(model: str, **by_config: float) -> ReportedRow:
    return ReportedRow(model, _T3, {(c, "PoSRank"): v for c, v in by_config.items()})


def _per_pos(model: str, by_config: dict) -> ReportedRow:
    return ReportedRow(model, _T7, {(c, f"PoSRank_{pos}"): v for c, five in by_config.items()
                                    for pos, v in zip(_T7_ORDER, five)})


BENCHMARK = Benchmark(
    name="posrank",
    title="PoSRank",
    order=30,
    task="multiple_choice",
    hub_id="video-hardneg/posrank",
    pretty_name="PoSRank fine-grained negatives (per part of speech)",
    paper_title="Beyond Coarse-Grained Matching in Video-Text Retrieval",
    paper_url="https://arxiv.org/abs/2410.12407",
    citation="""@inproceedings{chen2024beyond,
  title     = {Beyond Coarse-Grained Matching in Video-Text Retrieval},
  author    = {Chen, Aozhu and Doughty, Hazel and Li, Xirong and Snoek, Cees G. M.},
  booktitle = {Asian Conference on Computer Vision (ACCV)},
  year      = {2024}
}""",
    licenses=("unknown",),
    license_note=(
        "The PoSRank authors' release states no data license that we could confirm; captions come from the source "
        "datasets (MSR-VTT, VATEX, VLN-UVO, VLN-OOPS), which keep their own terms. Check the authors' repository "
        "before redistributing."
    ),
    description=(
        "PoSRank tests whether a video-text model sees single-word differences: for each caption, 20 copies with "
        "one noun, verb, adjective, adverb or preposition replaced. The model ranks the true caption among them; "
        "PoSRank is the mean reciprocal rank per part of speech (`PoSRank_noun`, ..., `PoSRank_prep`) and "
        "`PoSRank` their unweighted mean. One config per source dataset with a `test` split; the part of speech "
        "is the `category` column."
    ),
    negatives=(
        "For each caption and part of speech, a word with that tag (spaCy) is replaced, preferring its antonym, then "
        "an antonym of a hypernym or hyponym (WordNet), otherwise a same-tag word from the dataset vocabulary; 20 "
        "negatives per caption. Provenance records the generator, the part of speech and, recovered by diffing "
        "against the positive, the replaced span and its replacement."
    ),
    limitations=(
        "Negatives are generated automatically, so some are not wrong for the video (a synonym, or a word the "
        "video does not contradict); `hardneg analyze posrank-duplicates` measures how often. Chance MRR with 21 "
        "candidates is 17.4%. Migration: builds before video-hardneg 0.2 used the part of speech as the split name "
        "(`split=\"adv\"`); use `split=\"test\"` and filter `category == \"adv\"`."
    ),
    source_datasets=("MSR-VTT", "VATEX", "VLN-UVO", "VLN-OOPS"),
    parser="hardneg.datasets.raw_posrank:parse",
    raw_files=("uvo_val_/oops_val_/msr1ka_/vatex1k5_<pos>_RE20.json (the authors' Datasets/HardNegatives/ names)\n"
               "+ each one's caption source: captions.txt, msrvtt10ktest.caption.txt, vatex_test1k5_enc.txt\n"
               "(see docs/building.md)"),
    metrics=(
        Metric("PoSRank", "RR", "unweighted mean over parts of speech of the mean reciprocal rank (Eq. 1)",
               over="category"),
    ),
    ks=(1,),
    original_ties="posrank",
    original_ties_note="PoSRank evaluation script: ties count against the positive",
    breakdowns=("category",),
    sample="posrank",
    tags=("posrank", "fine-grained", "part-of-speech"),
    reported=(
        _mean("Frozen", msrvtt=0.285, vatex=0.243, vln_uvo=0.252, vln_oops=0.249),
        _mean("X-CLIP", msrvtt=0.343, vatex=0.278, vln_uvo=0.301, vln_oops=0.282),
        _mean("UCoFiA", msrvtt=0.351, vatex=0.268, vln_uvo=0.308, vln_oops=0.299),
        _mean("TS2-Net", msrvtt=0.351, vatex=0.283, vln_uvo=0.310, vln_oops=0.293),
        _per_pos("X-CLIP (coarse-grained training)", {
            "msrvtt": (0.430, 0.445, 0.314, 0.304, 0.225),
            "vatex": (0.312, 0.366, 0.276, 0.270, 0.166),
            "vln_oops": (0.409, 0.446, 0.236, 0.176, 0.142),
        }),
        _per_pos("X-CLIP + fine-grained prompting", {
            "msrvtt": (0.887, 0.897, 0.861, 0.723, 0.846),
            "vatex": (0.839, 0.774, 0.870, 0.738, 0.633),
            "vln_oops": (0.844, 0.783, 0.941, 0.540, 0.527),
        }),
    ),
)
