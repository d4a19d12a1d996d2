"""Declarative measure objects (ir_measures style): a name, parameters, a definition, a citation.

``R@1`` is ``R(k=1)``; ``parse_measure("C@10")`` gives ``CorrectAt(k=10)``. A measure
knows which task it applies to and reads its value from a ``RankingResult``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MA_2024 = "Ma et al., Rethinking Video-Text Understanding: Retrieval from Counterfactually Augmented Data (ECCV 2024)"
CHEN_2024 = "Chen et al., Beyond Coarse-Grained Matching in Video-Text Retrieval (ACCV 2024)"
RODRIGUEZ_2023 = "Rodriguez et al., Fighting FIRe with FIRE: Assessing the Validity of Text-to-Video Retrieval Benchmarks (EACL 2023 Findings)"
MCSHERRY_2008 = "McSherry and Najork, Computing Information Retrieval Performance Measures Efficiently in the Presence of Tied Scores (ECIR 2008)"


@dataclass(frozen=True)
class Measure:
    """One measure: ``key`` is its name in ``RankingResult.aggregate``."""

    name: str
    params: dict = field(default_factory=dict)
    description: str = ""
    citation: str = ""
    higher_is_better: bool = True

    @property
    def key(self) -> str:
        return f"{self.name}@{self.params['k']}" if "k" in self.params else self.name

    def __repr__(self) -> str:
        return self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __call__(self, **params) -> "Measure":
        return Measure(self.name, {**self.params, **params}, self.description, self.citation, self.higher_is_better)

    def __matmul__(self, k: int) -> "Measure":
        """``R@5`` written as ``R @ 5``."""
        return self(k=int(k))

    def value(self, result) -> float:
        """This measure's aggregate value in a ``RankingResult``."""
        try:
            return result.aggregate[self.key]
        except KeyError:
            raise KeyError(
                f"{self.key} is not in this result (has {sorted(result.aggregate)}); "
                "compute with a ks= that includes its cut-off"
            ) from None


R = Measure("R", description="share of examples whose (original) positive ranks in the top k", citation=MA_2024)
MeanR = Measure("MeanR", description="mean rank of the (original) positive, 1 = best", citation=MA_2024, higher_is_better=False)
MedianR = Measure("MedianR", description="median rank of the (original) positive", citation=MA_2024, higher_is_better=False)
MRR = Measure("MRR", description="mean reciprocal rank of the positive (PoSRank per part of speech, Eq. 1)", citation=CHEN_2024)
CorrectAt = Measure("C", description="share of queries with at least one relevant item in the top k (Correct@K, Eq. 1)", citation=RODRIGUEZ_2023)
AP = Measure(
    "mAP",
    description="mean over queries of average precision divided by the number of relevant items (Eq. 2); "
    "tie-aware as in McSherry & Najork",
    citation=f"{RODRIGUEZ_2023}; {MCSHERRY_2008}",
)
TieRate = Measure("tie_rate", description="share of examples where a relevant item shares its score with another candidate")

ALL_MEASURES = {m.name: m for m in (R, MeanR, MedianR, MRR, CorrectAt, AP, TieRate)}


def parse_measure(text: str) -> Measure:
    """'R@1' -> R(k=1); 'C@10' or 'Correct@10' -> CorrectAt(k=10); 'mAP' / 'AP' -> AP."""
    name, _, k = text.partition("@")
    name = {"Correct": "C", "AP": "mAP", "MAP": "mAP", "R": "R"}.get(name, name)
    if name not in ALL_MEASURES:
        raise ValueError(f"unknown measure {text!r}; known: R@k, C@k, MeanR, MedianR, MRR, mAP, tie_rate")
    measure = ALL_MEASURES[name]
    if k:
        if not k.isdigit() or int(k) < 1:
            raise ValueError(f"cut-off in {text!r} must be a positive integer")
        measure = measure(k=int(k))
    return measure
