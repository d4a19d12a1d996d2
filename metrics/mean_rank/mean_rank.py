"""MeanR and MedianR (rank of the positive among its candidates), exact under ties.

A thin `evaluate` wrapper over `hardneg.ranking.multiple_choice`.
"""

import datasets
import evaluate
import numpy as np

from hardneg.benchmarks import get as benchmark
from hardneg.metric_base import COMMON_KWARGS_DOC
from hardneg.metric_base import TIES_DOC
from hardneg.metric_base import HardnegMetric
from hardneg.metric_base import Stat
from hardneg.metric_base import check_resampling
from hardneg.metric_base import cluster_ids
from hardneg.metric_base import decode_ints
from hardneg.metric_base import decode_labels
from hardneg.metric_base import decode_scores
from hardneg.metric_base import scores_with_intervals
from hardneg.ranking import multiple_choice

_DESCRIPTION = """\
Mean rank (MeanR) and median rank (MedianR) of the positive caption among its candidates (rank 1 = best),
as reported for the RCAD task on Feint6K. Lower is better; with C candidates the range is [1, C] and a
constant scorer gets exactly (C + 1) / 2 under the default tie rule (expected rank over a random order of
tied candidates). Feint6K's original rule (the positive wins ties) is ties="feint6k".
"""

# the papers' BibTeX as their benchmarks declare it (declared once: hardneg.benchmarks)
_CITATION = benchmark("feint6k").citation

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[float]]` or 2-D array, N x C): the model's score for each candidate caption of
        each example (higher = better match). Rows may have different lengths.
    references (`list[int]`, N): index of the positive candidate in each row.
""" + COMMON_KWARGS_DOC + TIES_DOC + """
Returns:
    `MeanR`, `MedianR` (floats in [1, C]; lower is better) with `MeanR_ci`, `MedianR_ci` ([low, high]) when
    n_resamples > 0; `tie_rate`, `n`, `ties`; `per_example` (dict: `rank`) when return_per_example=True.

Examples:
    >>> import evaluate
    >>> mean_rank = evaluate.load("metrics/mean_rank")
    >>> mean_rank.compute(predictions=[[0.9, 0.1, 0.2], [0.3, 0.8, 0.1]], references=[0, 2], n_resamples=0)
    {'MeanR': 2.0, 'MedianR': 2.0, 'tie_rate': 0.0, 'n': 2, 'ties': 'expected'}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MeanRank(HardnegMetric):
    """MeanR and MedianR over multiple-choice score rows."""

    INPUT_KIND = "multiple_choice"
    OPTIONAL_INPUTS = ("video_ids",)
    STRING_INPUTS = ("video_ids",)

    def _info(self):
        return self._make_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            extra_features={"video_ids": datasets.Value("string")},
        )

    def _compute(self, predictions, references, video_ids=None, ties="expected", seed=0,
                 n_resamples=1000, confidence_level=0.95, return_per_example=False):
        n_resamples, confidence_level = check_resampling(n_resamples, confidence_level)
        rows = decode_scores(predictions)
        positive = decode_ints(references)
        videos = decode_labels(video_ids, "video_ids")
        result = multiple_choice(rows.scores, positive, mask=rows.mask, ks=(1,), ties=ties, seed=seed)
        rank = np.asarray(result.per_example["rank"], dtype=np.float64)
        out = scores_with_intervals(result.aggregate, result.per_example, [("MeanR", "MeanR", "rank")],
                                    cluster_ids(videos, positive.shape[0]), n_resamples, confidence_level, seed,
                                    extra={"MedianR": (result.aggregate["MedianR"], Stat("median", rank))})
        out["tie_rate"] = float(result.aggregate["tie_rate"])
        out["n"] = int(result.aggregate["n"])
        out["ties"] = ties
        if return_per_example:
            out["per_example"] = {"rank": np.asarray(result.per_example["rank"])}
        return out
