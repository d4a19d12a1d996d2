"""PoSRank: mean reciprocal rank of the true caption per part of speech, and their mean, exact under ties.

A thin `evaluate` wrapper over `hardneg.ranking.multiple_choice` with a part-of-speech breakdown.
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

#: the paper's five parts of speech, in the order results are listed (other labels follow, sorted)
POS_ORDER = ("noun", "verb", "adjective", "adverb", "preposition")

_DESCRIPTION = """\
PoSRank (Chen et al.): for each part of speech p, the mean reciprocal rank of the ground-truth caption
among itself and its single-word hard negatives of that part of speech (Eq. 1; 1.0 best, 1/C for chance
when all C candidates tie), and the mean of the per-part-of-speech scores. Each example is one
(video, part of speech) pair: a row of candidate scores, the index of the true caption and the part of
speech. The default tie rule is the exact expected reciprocal rank over random orders of tied captions;
PoSRank's released script counts ties against the true caption (ties="posrank").
"""

# the papers' BibTeX as their benchmarks declare it (declared once: hardneg.benchmarks)
_CITATION = benchmark("posrank").citation

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[float]]` or 2-D array, N x C): scores of the true caption and its negatives
        for each (video, part of speech) example; C = 21 with the paper's K = 20. Rows may differ in length.
    references (`list[int]`, N): index of the true caption in each row.
    pos (`list[str]`, N): the part of speech of each example's negatives (e.g. noun, verb, adjective,
        adverb, preposition).
""" + COMMON_KWARGS_DOC + TIES_DOC + """
Returns:
    `PoSRank_<pos>` (float in (0, 1]) for each part of speech present and `PoSRank` (the headline: their unweighted
    mean), each with `_ci` ([low, high]) when n_resamples > 0; `n_per_pos` (examples per part of speech),
    `tie_rate`, `n`, `ties`; `per_example` (dict: `RR`, `rank`) when return_per_example=True.

Examples:
    >>> import evaluate
    >>> posrank = evaluate.load("metrics/posrank")
    >>> posrank.compute(predictions=[[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]], references=[0, 0, 0],
    ...                 pos=["noun", "noun", "verb"], n_resamples=0)
    {'PoSRank_noun': 0.75, 'PoSRank_verb': 1.0, 'PoSRank': 0.875, 'n_per_pos': {'noun': 2, 'verb': 1}, 'tie_rate': 0.0, 'n': 3, 'ties': 'expected'}
"""


def _ordered(labels):
    canonical = {p: i for i, p in enumerate(POS_ORDER)}
    return sorted(labels, key=lambda p: (canonical.get(str(p).lower(), len(POS_ORDER)), str(p)))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Posrank(HardnegMetric):
    """PoSRank (MRR per part of speech) over multiple-choice score rows."""

    INPUT_KIND = "multiple_choice"
    OPTIONAL_INPUTS = ("video_ids",)
    STRING_INPUTS = ("pos", "video_ids")

    def _info(self):
        return self._make_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            extra_features={"pos": datasets.Value("string"), "video_ids": datasets.Value("string")},
        )

    def _compute(self, predictions, references, pos, video_ids=None, ties="expected", seed=0,
                 n_resamples=1000, confidence_level=0.95, return_per_example=False):
        n_resamples, confidence_level = check_resampling(n_resamples, confidence_level)
        rows = decode_scores(predictions)
        positive = decode_ints(references)
        part = decode_labels(pos, "pos")
        if part is None:
            raise ValueError("pos is missing: give the part of speech of every example")
        codes, names = part
        videos = decode_labels(video_ids, "video_ids")
        # group by integer codes (fast), then name the groups
        result = multiple_choice(rows.scores, positive, mask=rows.mask, ks=(1,), ties=ties, seed=seed,
                                 groups={"pos": codes})
        per_pos = {str(names[code]): value for code, value in result.by_group["pos"].items()}
        code_of = {str(name): i for i, name in enumerate(names)}
        rr = np.asarray(result.per_example["RR"], dtype=np.float64)
        labels = _ordered(per_pos)
        extra = {f"PoSRank_{p}": (per_pos[p]["MRR"], Stat("mean", rr, select=codes == code_of[p])) for p in labels}
        mean = float(np.mean([per_pos[p]["MRR"] for p in labels]))
        extra["PoSRank"] = (mean, Stat("mean_of_group_means", rr, groups=codes))
        out = scores_with_intervals({}, {}, [], cluster_ids(videos, positive.shape[0]), n_resamples,
                                    confidence_level, seed, extra=extra)
        out["n_per_pos"] = {str(p): int(per_pos[p]["n"]) for p in labels}
        out["tie_rate"] = float(result.aggregate["tie_rate"])
        out["n"] = int(result.aggregate["n"])
        out["ties"] = ties
        if return_per_example:
            out["per_example"] = {"RR": rr, "rank": np.asarray(result.per_example["rank"])}
        return out
