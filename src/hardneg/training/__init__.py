"""Training against hard negatives: the papers' objectives (`losses`) and a resumable trainer.

    import hardneg
    hardneg.train("tiny-temporal", data="world-built/", out="runs/word", objective="word")

`hardneg train` is the same from the command line; docs/training.md explains each objective. The settings of
a run travel as one frozen `TrainSpec` (`hardneg.training.spec`): `trainer.run_training(spec)` runs one.
"""

from hardneg.training.losses import (coarse_loss, fine_loss, llm_teacher_label_loss, llm_teacher_logit_loss,
                                     posrank_loss)
from hardneg.training.spec import TrainSpec


def train(*args, **kwargs):
    """`hardneg.training.trainer.train` (imported on first use)."""
    from hardneg.training.trainer import train as _train

    return _train(*args, **kwargs)


__all__ = ["coarse_loss", "fine_loss", "posrank_loss", "llm_teacher_label_loss", "llm_teacher_logit_loss", "train", "TrainSpec"]
