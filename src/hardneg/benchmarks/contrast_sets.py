"""Contrast sets (Park et al., NAACL 2022): 5-way multiple choice with one manipulated caption."""

from hardneg.benchmarks.base import Benchmark, Metric, ReportedRow

_T2 = "Park et al., Exposing the Limits of Video-Text Models through Contrast Sets, Table 2 (MSR-VTT)"
_T3 = "Park et al., Exposing the Limits of Video-Text Models through Contrast Sets, Table 3 (LSMDC-IDs)"


def _row(model: str, source: str, **by_config: float) -> ReportedRow:
    return ReportedRow(model, source, {(c, "Accuracy"): v / 100 for c, v in by_config.items()})


BENCHMARK = Benchmark(
    name="contrast_sets",
    title="Contrast sets",
    order=20,
    task="multiple_choice",
    hub_id="video-hardneg/contrast-sets",
    pretty_name="Contrast sets for video-text models (MSR-VTT multiple choice)",
    paper_title="Exposing the Limits of Video-Text Models through Contrast Sets",
    paper_url="https://aclanthology.org/2022.naacl-main.261/",
    citation="""@inproceedings{park2022exposing,
  title     = {Exposing the Limits of Video-Text Models through Contrast Sets},
  author    = {Park, Jae Sung and Shen, Sheng and Farhadi, Ali and Darrell, Trevor and Choi, Yejin and Rohrbach, Anna},
  booktitle = {Proceedings of the 2022 Conference of the North American Chapter of the Association for Computational Linguistics (NAACL)},
  year      = {2022}
}""",
    licenses=("unknown",),
    license_note=(
        "The authors' repository (github.com/jamespark3922/video-lang-contrast-set) states no data license that "
        "we could confirm; the captions come from MSR-VTT, distributed for research use. Configs rebuilt by "
        "video-hardneg generators (random, gender, id) are Apache-2.0 as code output over those captions."
    ),
    description=(
        "Contrast sets test whether a video-text model notices a small, meaningful change in a caption. Each item "
        "is a 5-way multiple choice for one MSR-VTT video: the true caption, one manipulated copy of it (a verb "
        "phrase changed by a language model or by a person, a gender word flipped, or a character ID swapped) "
        "and captions of other videos."
    ),
    negatives=(
        "`verb_lm`: a verb phrase of the positive replaced by a language model, filtered for plausibility and "
        "contradiction. `verb_human`: the same items with a human-written verb replacement. The option named by "
        "`c_label` (`manipulated_index`) has the set's type; the other non-positive options are captions of other "
        "videos (type `random`). Where a release has no `c_label` the non-positive options have type `unknown`. "
        "`random`, `gender` and `id` were never released by the authors: those configs come from video-hardneg's "
        "generators and carry their rule, word map, seed and version in `provenance`."
    ),
    limitations=(
        "Three of the four options are captions of other videos, which most models reject easily, so accuracy "
        "mixes the hard manipulated option with easy random ones: look at the `manipulated` breakdown. The "
        "random, gender and id configs are rebuilt by our generators, not released by the authors, so they are "
        "close to but not the same items as the paper's."
    ),
    source_datasets=("MSR-VTT", "LSMDC"),
    parser="hardneg.datasets.raw_contrast_sets:parse",
    raw_files=("*.tsv (clip ending0..4 label [c_label]; 'human'/'lm' in the name),\n"
               "generator output *.parquet / *.jsonl (MC_ITEM_SCHEMA rows)"),
    # `Accuracy` (a 5-way choice accuracy), named `R@1` before video-hardneg 0.2: the same number, renamed so
    # that a metric is named by what it computes (see the card's "Migration" note)
    metrics=(Metric("Accuracy", "R@1", "share of items whose true caption scores highest of the 5 options"),),
    ks=(1,),
    original_ties="expected",
    original_ties_note="the authors' evaluation takes an argmax; their code does not define ties",
    breakdowns=("category",),
    sample="contrast_sets",
    tags=("contrast-sets", "msr-vtt"),
    usage_note=(
        "**Metric: `Accuracy`** (a 5-way choice accuracy; the `accuracy` evaluate module, "
        "`evaluate.load(hardneg.metric_path(\"accuracy\"))`). Migration: before video-hardneg 0.2 this number was "
        "reported as `R@1` (of the `rcad_accuracy` module, in `results.json`, on the board and in submissions); it is "
        "the same value, renamed because a metric is named by what it computes. Old results files keep `R@1`: read "
        "it as `Accuracy`."
    ),
    config_descriptions={
        "random": "5 options, negatives are captions of other videos (rebuilt)",
        "gender": "gender word of the positive flipped (rebuilt)",
        "verb_lm": "verb phrase replaced by a language model (authors' release)",
        "verb_human": "verb phrase replaced by a person (authors' release)",
        "id": "LSMDC character IDs swapped (rebuilt)",
    },
    reported=(
        _row("CLIP zero-shot", _T2, random=91.1, gender=69.6, verb_lm=65.4, verb_human=64.1),
        _row("MMT", _T2, random=97.6, gender=84.0, verb_lm=83.4, verb_human=80.3),
        _row("MMT-CLIP", _T2, random=97.2, gender=84.0, verb_lm=80.9, verb_human=78.3),
        _row("CLIP4CLIP", _T2, random=98.4, gender=82.7, verb_lm=83.7, verb_human=80.2),
        _row("CLIP2Video", _T2, random=98.3, gender=78.5, verb_lm=81.1, verb_human=79.0),
        _row("Human", _T2, verb_lm=92.7, verb_human=94.5),
        _row("CLIP zero-shot (LSMDC-IDs)", _T3, id=39.8),
        _row("MMT (LSMDC-IDs)", _T3, id=65.2),
        _row("MMT-CLIP (LSMDC-IDs)", _T3, id=70.1),
        _row("CLIP4CLIP (LSMDC-IDs)", _T3, id=69.1),
    ),
)
