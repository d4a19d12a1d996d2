"""The training objectives, one record each.

Everything the trainer, its provenance and `hardneg train --help` say about an objective is in its
`Objective` record here (before, it was spread over `losses.OBJECTIVES`, the trainer's
`OBJECTIVE_NEEDS`, a provenance table and the CLI's help text, to be edited in step). Adding an
objective: one record here, its loss in `hardneg.training.losses` (and its branch in the trainer's
step when its extra term is a new kind), a row in docs/training.md, and a test in tests/training.
"""

from __future__ import annotations

from dataclasses import dataclass

#: how the extra term lambda * L is computed from the negatives (the trainer's step branches on it)
EXTRA_TERMS = ("fine", "label", "logit")


@dataclass(frozen=True)
class Objective:
    """One training objective.

    name: what `--objective` takes; summary: its line in `hardneg train --help`; equation: the paper's
    equation, recorded in the checkpoint's provenance; generator: the negatives generator it runs by default
    (None: it uses no negatives, L_coarse alone); prompt: the model gets a learnable visual prompt token whose
    output the fine term scores; extra: the kind of extra term (EXTRA_TERMS; None with no negatives)."""

    name: str
    summary: str
    equation: str
    generator: str | None = None
    prompt: bool = False
    extra: str | None = None

    def __post_init__(self) -> None:
        if (self.generator is None) != (self.extra is None) or (self.extra and self.extra not in EXTRA_TERMS):
            raise ValueError(f"objective {self.name!r}: a generator and an extra term {EXTRA_TERMS} go together")


OBJECTIVE_RECORDS: dict[str, Objective] = {o.name: o for o in (
    Objective("coarse", "L_coarse, symmetric video-text InfoNCE over the batch (PoSRank Sec. 6.1)",
              "PoSRank Sec. 6.1"),
    Objective("word", "L_coarse + lambda L_fine, word-level negatives (PoSRank Eq. 3-4; generator posrank)",
              "PoSRank Eq. 4 (word-level)", generator="posrank", extra="fine"),
    Objective("phrase", "the same with phrase-level negatives (Sec. 6.3; generator posrank_phrase)",
              "PoSRank Eq. 4 (phrase-level)", generator="posrank_phrase", extra="fine"),
    Objective("prompt", "phrase-level, L_fine on a learnable visual prompt token, L_coarse on CLS (Sec. 6.4)",
              "PoSRank Eq. 4 + fine-grained prompting (Sec. 6.4)", generator="posrank_phrase", prompt=True,
              extra="fine"),
    Objective("llm-lbl", "L_coarse + lambda Feint6K Eq. 1 (LLM-teacher, binary labels; generator llm_teacher)",
              "L_coarse + lambda Feint6K Eq. 1", generator="llm_teacher", extra="label"),
    Objective("llm-lgt", "L_coarse + lambda Feint6K Eq. 2 (soft logits from a sentence-embedding teacher)",
              "L_coarse + lambda Feint6K Eq. 2", generator="llm_teacher", extra="logit"),
)}

#: the objectives' names, in the order `--help` lists them
OBJECTIVES = tuple(OBJECTIVE_RECORDS)


def objective(name: str) -> Objective:
    """The record of objective `name`, with a clear error naming the choices."""
    if name not in OBJECTIVE_RECORDS:
        raise ValueError(f"objective {name!r} unknown; choose one of {list(OBJECTIVES)}")
    return OBJECTIVE_RECORDS[name]


def help_lines() -> str:
    """The objectives' lines of `hardneg train --help`."""
    return "\n".join(f"  {o.name:<9} {o.summary}" for o in OBJECTIVE_RECORDS.values())
