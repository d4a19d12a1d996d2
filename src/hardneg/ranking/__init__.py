"""The one ranking core: exact, tie-aware rank metrics in pure NumPy.

``multiple_choice`` (one positive among C candidates) and ``retrieval`` (queries over
items with one or more relevant items) return a ``RankingResult``; ``bootstrap_ci`` and
``paired_test`` resample whole videos. Ties are a parameter everywhere (``TIE_RULES``).
"""

from .bootstrap import BootstrapCI, PairedTest, bootstrap_ci, paired_test
from .grouped import all_right, first_of_group
from .measures import AP, ALL_MEASURES, MRR, CorrectAt, MeanR, MedianR, Measure, R, TieRate, parse_measure
from .multiple_choice import multiple_choice
from .qrels import Qrels
from .ragged import pad_ragged
from .results import RankingResult
from .retrieval import retrieval
from .ties import TIE_RULES

__all__ = [
    "AP",
    "ALL_MEASURES",
    "BootstrapCI",
    "CorrectAt",
    "MRR",
    "MeanR",
    "MedianR",
    "Measure",
    "PairedTest",
    "Qrels",
    "R",
    "RankingResult",
    "TIE_RULES",
    "TieRate",
    "all_right",
    "bootstrap_ci",
    "first_of_group",
    "multiple_choice",
    "paired_test",
    "pad_ragged",
    "parse_measure",
    "retrieval",
]
