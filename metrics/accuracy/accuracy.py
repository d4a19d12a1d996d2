"""Multiple-choice accuracy (contrast sets, VITATECS, ...), exact under ties, optionally averaged over groups.

A thin `evaluate` wrapper over `hardneg.ranking.multiple_choice`: each example is one question with its
positive and its negatives; Accuracy is the share of examples whose positive scores above every negative
(the ranking core's per-item R@1). With `groups`, `Accuracy_<group>` per group and `Accuracy` as their
unweighted mean (VITATECS's mean over temporal aspects).
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
Accuracy of multiple-choice video-text questions: the share of examples whose positive caption scores
above all of its negatives (contrast sets: 5 options; VITATECS: a caption and its counterfactual; any
number of options, ragged rows allowed). Ties between the positive and a negative count their exact
expected value by default, so a constant scorer gets 1/C. With `groups` (e.g. VITATECS's temporal aspect)
the module also reports `Accuracy_<group>` and makes `Accuracy` the unweighted mean over the groups.
"""

# the papers' BibTeX as their benchmarks declare it (declared once: hardneg.benchmarks)
_CITATION = benchmark("contrast_sets").citation + "\n" + benchmark("vitatecs").citation

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[float]]` or 2-D array, N x C): the model's score for each option of each example
        (higher = better match). Rows may have different lengths.
    references (`list[int]`, N): index of the positive option in each row.
    groups (`list[str]`, N, optional): a group label per example (e.g. VITATECS's aspect); with it `Accuracy`
        is the unweighted mean over groups of each group's accuracy.
""" + COMMON_KWARGS_DOC + TIES_DOC + """
Returns:
    `Accuracy` (float in [0, 1]) and, with `groups`, `Accuracy_<group>` for each group, each with `_ci`
    ([low, high]) when n_resamples > 0; `n_per_group` (with `groups`), `tie_rate`, `n`, `ties`;
    `per_example` (dict: `correct`, `rank`) when return_per_example=True.

Examples:
    >>> import evaluate
    >>> accuracy = evaluate.load("metrics/accuracy")
    >>> accuracy.compute(predictions=[[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]], references=[0, 0, 0],
    ...                  groups=["direction", "direction", "sequence"], n_resamples=0)
    {'Accuracy_direction': 0.5, 'Accuracy_sequence': 1.0, 'Accuracy': 0.75, 'n_per_group': {'direction': 2, 'sequence': 1}, 'tie_rate': 0.0, 'n': 3, 'ties': 'expected'}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Accuracy(HardnegMetric):
    """Accuracy over multiple-choice score rows (optionally per group and their mean)."""

    INPUT_KIND = "multiple_choice"
    OPTIONAL_INPUTS = ("groups", "video_ids")
    STRING_INPUTS = ("groups", "video_ids")

    def _info(self):
        return self._make_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            extra_features={"groups": datasets.Value("string"), "video_ids": datasets.Value("string")},
        )

    def _compute(self, predictions, references, groups=None, video_ids=None, ties="expected", seed=0,
                 n_resamples=1000, confidence_level=0.95, return_per_example=False):
        n_resamples, confidence_level = check_resampling(n_resamples, confidence_level)
        rows = decode_scores(predictions)
        positive = decode_ints(references)
        videos = decode_labels(video_ids, "video_ids")
        part = decode_labels(groups, "groups")
        result = multiple_choice(rows.scores, positive, mask=rows.mask, ks=(1,), ties=ties, seed=seed)
        correct = np.asarray(result.per_example["R@1"], dtype=np.float64)
        clusters = cluster_ids(videos, positive.shape[0])
        if part is None:
            out = scores_with_intervals({}, {}, [], clusters, n_resamples, confidence_level, seed,
                                        extra={"Accuracy": (float(correct.mean()), Stat("mean", correct))})
        else:
            codes, names = part
            labels = sorted({str(names[c]) for c in np.unique(codes)})
            code_of = {str(name): i for i, name in enumerate(names)}
            per = {g: float(correct[codes == code_of[g]].mean()) for g in labels}
            extra = {f"Accuracy_{g}": (per[g], Stat("mean", correct, select=codes == code_of[g])) for g in labels}
            extra["Accuracy"] = (float(np.mean([per[g] for g in labels])),
                                 Stat("mean_of_group_means", correct, groups=codes))
            out = scores_with_intervals({}, {}, [], clusters, n_resamples, confidence_level, seed, extra=extra)
            out["n_per_group"] = {g: int((codes == code_of[g]).sum()) for g in labels}
        out["tie_rate"] = float(result.aggregate["tie_rate"])
        out["n"] = int(result.aggregate["n"])
        out["ties"] = ties
        if return_per_example:
            out["per_example"] = {"correct": correct, "rank": np.asarray(result.per_example["rank"])}
        return out
