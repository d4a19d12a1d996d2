"""FIRE (Rodriguez et al., EACL Findings 2023): extra relevance labels for MSR-VTT / MSVD retrieval."""

from hardneg.benchmarks.base import Benchmark, Metric, ReportedRow

_T1 = "Rodriguez et al., Fighting FIRe with FIRE, Table 1"


def _row(model: str, **by_config: dict) -> ReportedRow:
    """by_config: config -> {metric: (A with FIRE labels, B original labels, C = A - B)} in percent."""
    values = {}
    for config, metrics in by_config.items():
        for key, (a, b, _c) in metrics.items():
            values[(config, key)] = a / 100
            values[(config, f"{key}_original")] = b / 100
    return ReportedRow(model, _T1, values)


def _with_original(key: str, source: str, original_source: str, text: str) -> Metric:
    original = Metric(f"{key}_original", original_source, f"{text}, counting only the caption's own video")
    return Metric(key, source, f"{text}, with the FIRE labels", baseline=original)


BENCHMARK = Benchmark(
    name="fire",
    title="FIRE",
    order=40,
    task="retrieval",
    hub_id="video-hardneg/fire",
    pretty_name="FIRE: extra relevance labels for MSR-VTT and MSVD text-to-video retrieval",
    paper_title="Fighting FIRe with FIRE: Assessing the Validity of Text-to-Video Retrieval Benchmarks",
    paper_url="https://aclanthology.org/2023.findings-eacl.5/",
    citation="""@inproceedings{rodriguez2023fighting,
  title     = {Fighting {FIRe} with {FIRE}: Assessing the Validity of Text-to-Video Retrieval Benchmarks},
  author    = {Rodriguez, Pedro and Azab, Mahmoud and Silvert, Becka and Sanchez, Renato and Labson, Linzy and Shah, Hardik and Moon, Seungwhan},
  booktitle = {Findings of the Association for Computational Linguistics: EACL 2023},
  year      = {2023}
}""",
    licenses=("cc-by-nc-sa-4.0", "cc-by-nc-2.0"),
    license_note=(
        "The FIRE data's LICENSE file says CC BY-NC-SA 4.0 while its README says CC BY-NC 2.0; both are recorded "
        "here until the authors resolve it: use the data under the stricter terms (non-commercial, share-alike). "
        "Captions and videos belong to MSR-VTT and MSVD."
    ),
    description=(
        "Text-to-video retrieval benchmarks count only a caption's own video as relevant, so a model that returns "
        "another matching video is marked wrong. FIRE adds human relevance judgments of the top-10 predictions of "
        "several models on MSR-VTT (1k-A test) and MSVD (test), so metrics can be computed with the original "
        "positives only, with FIRE positives, and their difference (\"A (B + C)\")."
    ),
    negatives=(
        "Not negatives but extra positives: annotators marked a (caption, video) pair relevant only if everything the "
        "caption mentions is in the video. Judgments of one pair are pooled and decided by majority vote; ties are "
        "kept with `unresolved = true` and label 0. Rows with `source = original` are the benchmark's own pairs."
    ),
    limitations=(
        "Only the top-10 predictions of the judged models were labelled, so a relevant video that none of them "
        "ranked high stays unlabelled (pooling bias; `hardneg analyze fire-pooling-bias`). Models that were not "
        "judged are favoured less by the extra labels than the judged ones."
    ),
    source_datasets=("MSR-VTT", "MSVD"),
    parser="hardneg.datasets.raw_fire:parse",
    raw_files="the release JSON (annotations, disagreements) + <config>_queries.csv (video_id,sentence)",
    metrics=(
        _with_original("C@1", "C@1", "R@1", "share of queries with a relevant video ranked first"),
        _with_original("C@5", "C@5", "R@5", "share of queries with a relevant video in the top 5"),
        _with_original("C@10", "C@10", "R@10", "share of queries with a relevant video in the top 10"),
        _with_original("mAP", "AP", "AP_original", "mean average precision (FIRE Eq. 2)"),
    ),
    ks=(1, 5, 10),
    original_ties="fire",
    original_ties_note="FIRE code: stable descending argsort; AP over relevant videos found in the top 20",
    sample="fire",
    tags=("fire", "text-to-video-retrieval", "msr-vtt", "msvd"),
    companion_suffixes=("-queries", "-videos"),
    usage_note=(
        "Each row of `<name>-queries` carries `relevant` (indices into the `<name>-videos` table's row order of every "
        "video judged relevant) and `original` (the index of the caption's own video), so `references` and "
        "`original` of the `correct_at_k` and `mean_average_precision` modules come straight from it. The "
        "`<name>` config holds every judged (query, video) row with its votes."
    ),
    reported=(
        _row("TeachText",
             msrvtt={"C@1": (24.1, 23.3, 0.8), "C@5": (53.2, 50.9, 2.3), "C@10": (67.0, 64.8, 2.2), "mAP": (36.1, 35.8, 0.296)},
             msvd={"C@1": (34.7, 19.6, 15.2), "C@5": (64.7, 48.9, 15.8), "C@10": (76.1, 63.9, 12.2), "mAP": (44.3, 33.1, 11.2)}),
        _row("Support-Set Bottlenecks (ssb)",
             msrvtt={"C@1": (27.3, 26.8, 0.5), "C@5": (55.9, 54.5, 1.4), "C@10": (68.9, 66.3, 2.6), "mAP": (39.3, 39.2, 0.0374)}),
        _row("CLIP4Clip",
             msrvtt={"C@1": (67.4, 42.4, 25.0), "C@5": (90.7, 70.4, 20.3), "C@10": (95.7, 80.2, 15.5), "mAP": (69.5, 54.9, 14.7)},
             msvd={"C@1": (65.3, 46.6, 18.8), "C@5": (89.6, 76.8, 12.8), "C@10": (94.0, 85.4, 8.61), "mAP": (71.3, 59.7, 11.6)}),
    ),
)
