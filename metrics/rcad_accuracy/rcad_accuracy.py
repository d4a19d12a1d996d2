"""R@K for retrieval from counterfactually augmented data (Feint6K/RCAD), exact under ties.

A thin `evaluate` wrapper over `hardneg.ranking.multiple_choice`: each example is one video
with its positive caption and hard negatives; R@K is the share of examples whose positive
ranks in the top K.
"""

import datasets
import evaluate
import numpy as np

from hardneg.benchmarks import get as benchmark
from hardneg.metric_base import COMMON_KWARGS_DOC
from hardneg.metric_base import TIES_DOC
from hardneg.metric_base import HardnegMetric
from hardneg.metric_base import check_ks
from hardneg.metric_base import check_resampling
from hardneg.metric_base import cluster_ids
from hardneg.metric_base import decode_ints
from hardneg.metric_base import decode_labels
from hardneg.metric_base import decode_scores
from hardneg.metric_base import Stat
from hardneg.metric_base import scores_with_intervals
from hardneg.ranking import all_right
from hardneg.ranking import first_of_group
from hardneg.ranking import multiple_choice

_DESCRIPTION = """\
Recall@K (R@K) for multiple-choice caption retrieval with hard negatives, the metric of the RCAD task
on Feint6K (one positive caption and five counterfactual captions per video; R@1, R@2). Works for any
number of candidates and ragged rows (a multiple-choice benchmark's Accuracy: the `accuracy` module). Ties between the positive and a
negative are resolved exactly (expected value over a random order) by default, so a constant scorer
gets R@1 = 1/C; Feint6K's original rule (the positive wins ties) is available as ties="feint6k".
"""

# the papers' BibTeX as their benchmarks declare it (declared once: hardneg.benchmarks)
_CITATION = benchmark("feint6k").citation

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[float]]` or 2-D array, N x C): the model's score for each candidate caption of
        each example (higher = better match). Rows may have different lengths.
    references (`list[int]`, N): index of the positive candidate in each row.
""" + COMMON_KWARGS_DOC + """\
    ks (`list[int]`, default `[1, 2]`): the K of each R@K.
    group_ids (`list[str]`, optional, streamed like `video_ids`): rows with the same label form one group
        (ViLMA: an item's main and proficiency test); adds `Combined`.
""" + TIES_DOC + """
Returns:
    `R@K` (float in [0, 1]) for each K, with `R@K_ci` ([low, high]) when n_resamples > 0;
    `Combined` (with `group_ids`): share of groups whose every row has its positive first (the product of
    the rows' R@1, so the expected share under ties="expected"), with `Combined_ci`;
    `tie_rate` (share of examples whose positive ties a negative), `n` (examples), `ties` (the rule used);
    `per_example` (dict: `rank`, `R@K`) when return_per_example=True.

Examples:
    >>> import evaluate
    >>> rcad = evaluate.load("metrics/rcad_accuracy")
    >>> rcad.compute(predictions=[[0.9, 0.1, 0.2], [0.3, 0.8, 0.1]], references=[0, 2], n_resamples=0)
    {'R@1': 0.5, 'R@2': 0.5, 'tie_rate': 0.0, 'n': 2, 'ties': 'expected'}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RcadAccuracy(HardnegMetric):
    """R@K over multiple-choice score rows."""

    INPUT_KIND = "multiple_choice"
    OPTIONAL_INPUTS = ("video_ids", "group_ids")
    STRING_INPUTS = ("video_ids", "group_ids")

    def _info(self):
        return self._make_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            extra_features={"video_ids": datasets.Value("string"), "group_ids": datasets.Value("string")},
        )

    def _compute(self, predictions, references, video_ids=None, group_ids=None, ks=(1, 2), ties="expected", seed=0,
                 n_resamples=1000, confidence_level=0.95, return_per_example=False):
        ks = check_ks(ks)
        n_resamples, confidence_level = check_resampling(n_resamples, confidence_level)
        rows = decode_scores(predictions)
        positive = decode_ints(references)
        videos = decode_labels(video_ids, "video_ids")
        labels = decode_labels(group_ids, "group_ids")
        core_ks = ks if labels is None or 1 in ks else (*ks, 1)  # Combined needs each row's R@1
        result = multiple_choice(rows.scores, positive, mask=rows.mask, ks=core_ks, ties=ties, seed=seed)
        keys = [(f"R@{k}", f"R@{k}") for k in ks]
        extra = {}
        if labels is not None:  # ViLMA bin/multi_eval.py: a group counts when all of its rows are right
            both = all_right(result.per_example["R@1"], labels[0])
            first = first_of_group(labels[0])
            extra["Combined"] = (float(both[first].mean()), Stat("mean", both, select=first))
        out = scores_with_intervals(result.aggregate, result.per_example, keys,
                                    cluster_ids(videos, positive.shape[0]), n_resamples, confidence_level, seed,
                                    extra=extra)
        out["tie_rate"] = float(result.aggregate["tie_rate"])
        out["n"] = int(result.aggregate["n"])
        out["ties"] = ties
        if return_per_example:
            out["per_example"] = {name: np.asarray(result.per_example[name]) for name in ["rank", *(k for k, _ in keys)]}
        return out
