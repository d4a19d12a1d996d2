"""Mean average precision as defined by FIRE (Eq. 2), tie-aware (McSherry and Najork, ECIR 2008).

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
from hardneg.metric_base import check_resampling
from hardneg.metric_base import retrieval_result
from hardneg.metric_base import scores_with_intervals

_DESCRIPTION = """\
Mean average precision (mAP) for text-to-video retrieval with several relevant videos per query, as in
FIRE (Eq. 2): per query, the precision at the rank of every relevant video, summed and divided by the
number of relevant videos of the query (relevant videos never retrieved add 0), then averaged over
queries. The default tie rule gives the exact expected AP over random orders of tied videos (McSherry
and Najork's tie-aware formula). FIRE's released code differs: it orders ties by argsort and divides by
the relevant videos found in the top 20; ties="fire" reproduces it. With `original`, the mAP counting
only the caption's own video (`mAP_original`) is reported next to it: the MRR of that video under every tie
rule except ties="fire", where the top-20 cut makes it the MRR truncated at rank 20.
"""

# the papers' BibTeX as their benchmarks declare it (declared once: hardneg.benchmarks)
_TIES_CITATION = """\
@inproceedings{mcsherry2008computing,
  title     = {Computing Information Retrieval Performance Measures Efficiently in the Presence of Tied Scores},
  author    = {McSherry, Frank and Najork, Marc},
  booktitle = {Advances in Information Retrieval (ECIR)},
  year      = {2008}
}
"""
_CITATION = benchmark("fire").citation + "\n" + _TIES_CITATION

_KWARGS_DESCRIPTION = """
Args:
""" + RETRIEVAL_INPUTS_DOC + COMMON_KWARGS_DOC + TIES_DOC + """
Returns:
    `mAP` (float in [0, 1]) with `mAP_ci` ([low, high]) when n_resamples > 0; with `original` also
    `mAP_original` (+ `_ci`); `tie_rate`, `n` (queries), `ties`;
    `per_example` (dict: `AP`, ...) when return_per_example=True.

Examples:
    >>> import evaluate
    >>> mean_ap = evaluate.load("metrics/mean_average_precision")
    >>> mean_ap.compute(predictions=[[0.9, 0.1, 0.2], [0.3, 0.8, 0.1]], references=[[0], [0, 2]], n_resamples=0)
    {'mAP': 0.7916666666666666, 'tie_rate': 0.0, 'n': 2, 'ties': 'expected'}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MeanAveragePrecision(HardnegMetric):
    """FIRE mAP over a query x video score matrix with sets of relevant videos."""

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

    def _compute(self, predictions, references, original=None, video_ids=None, ties="expected", seed=0,
                 n_resamples=1000, confidence_level=0.95, return_per_example=False):
        n_resamples, confidence_level = check_resampling(n_resamples, confidence_level)
        result, clusters, has_original = retrieval_result(predictions, references, original, video_ids, (1,),
                                                          ties, seed)
        keys = [("mAP", "mAP", "AP")]
        if has_original:
            keys.append(("mAP_original", "mAP_original", "AP_original"))
        out = scores_with_intervals(result.aggregate, result.per_example, keys, clusters,
                                    n_resamples, confidence_level, seed)
        out["tie_rate"] = float(result.aggregate["tie_rate"])
        out["n"] = int(result.aggregate["n"])
        out["ties"] = ties
        if return_per_example:
            names = ["AP", "AP_original"] if has_original else ["AP"]
            out["per_example"] = {name: np.asarray(result.per_example[name]) for name in names}
        return out
