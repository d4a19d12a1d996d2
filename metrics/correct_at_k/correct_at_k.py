"""Correct@K (FIRE): 1 if any relevant video is in a query's top K, exact under ties.

A thin `evaluate` wrapper over `hardneg.ranking.retrieval`.
"""

import datasets
import evaluate
import numpy as np

from hardneg.benchmarks import get as benchmark
from hardneg.metric_base import COMMON_KWARGS_DOC
from hardneg.metric_base import RETRIEVAL_INPUTS_DOC
from hardneg.metric_base import TIES_DOC
from hardneg.metric_base import HardnegMetric
from hardneg.metric_base import check_ks
from hardneg.metric_base import check_resampling
from hardneg.metric_base import retrieval_result
from hardneg.metric_base import scores_with_intervals

_DESCRIPTION = """\
Correct@K (C@K) for text-to-video retrieval with several relevant videos per query, as defined by FIRE:
1 if at least one relevant video is among the top K, else 0, averaged over queries. With one relevant
video per query it equals Recall@K. When `original` (the caption's own video) is given, C@K counting
only that video is reported next to it (`C@K_original`), the "A" of FIRE's "A (B + C)".
Ties are exact in expectation by default; FIRE's original argsort order is ties="fire".
"""

# the papers' BibTeX as their benchmarks declare it (declared once: hardneg.benchmarks)
_CITATION = benchmark("fire").citation

_KWARGS_DESCRIPTION = """
Args:
""" + RETRIEVAL_INPUTS_DOC + COMMON_KWARGS_DOC + """\
    ks (`list[int]`, default `[1, 5, 10]`): the K of each C@K.
""" + TIES_DOC + """
Returns:
    `C@K` (float in [0, 1]) for each K with `C@K_ci` ([low, high]) when n_resamples > 0; with `original`
    also `C@K_original` (+ `_ci`); `tie_rate`, `n` (queries), `ties`;
    `per_example` (dict: `C@K`, ...) when return_per_example=True.

Examples:
    >>> import evaluate
    >>> c_at_k = evaluate.load("metrics/correct_at_k")
    >>> c_at_k.compute(predictions=[[0.9, 0.1, 0.2], [0.3, 0.8, 0.1]], references=[[0], [0, 2]],
    ...                ks=[1, 2], n_resamples=0)
    {'C@1': 0.5, 'C@2': 1.0, 'tie_rate': 0.0, 'n': 2, 'ties': 'expected'}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CorrectAtK(HardnegMetric):
    """Correct@K over a query x video score matrix with sets of relevant videos."""

    INPUT_KIND = "retrieval"
    OPTIONAL_INPUTS = ("original", "video_ids")
    STRING_INPUTS = ("video_ids",)

    def _info(self):
        return self._make_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            extra_features={"original": datasets.Value("int64"), "video_ids": datasets.Value("string")},
        )

    def _compute(self, predictions, references, original=None, video_ids=None, ks=(1, 5, 10), ties="expected",
                 seed=0, n_resamples=1000, confidence_level=0.95, return_per_example=False):
        ks = check_ks(ks)
        n_resamples, confidence_level = check_resampling(n_resamples, confidence_level)
        result, clusters, has_original = retrieval_result(predictions, references, original, video_ids, ks, ties, seed)
        keys = [(f"C@{k}", f"C@{k}") for k in ks]
        if has_original:
            keys += [(f"C@{k}_original", f"R@{k}") for k in ks]
        out = scores_with_intervals(result.aggregate, result.per_example, keys, clusters,
                                    n_resamples, confidence_level, seed)
        out["tie_rate"] = float(result.aggregate["tie_rate"])
        out["n"] = int(result.aggregate["n"])
        out["ties"] = ties
        if return_per_example:
            out["per_example"] = {name: np.asarray(result.per_example[core]) for name, core in keys}
        return out
