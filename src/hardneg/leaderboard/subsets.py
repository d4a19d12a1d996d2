"""Parts a submission gives without naming them: a declared subset config scored from its larger config's file.

ATP-Hard's `causal` and `temporal` configs hold `atp-hard` items under the same ids (`Benchmark.subset_of`).
A file that scores every `atp-hard` item (the authors' released scores, imported) therefore scores both
subsets too; the board stores them beside it, recomputed from the same scores, so the benchmark's tab and its
coverage show what `hardneg evaluate` gives on the same file. Nothing here knows a benchmark by name.
"""

from __future__ import annotations

import numpy as np

from hardneg import benchmarks as registry
from hardneg.leaderboard.validate import ValidatedPart


def subset_part(whole: ValidatedPart, items) -> ValidatedPart | None:
    """The rows of `whole` that are the items of the subset config `items` (same ids, same candidates), or None
    when they are not all there (then the subset is not derived: it is not a subset of this file)."""
    if items.task != "multiple_choice" or whole.items.task != "multiple_choice":
        return None
    rows = [whole.items.index.get(str(i)) for i in items.ids.tolist()]
    if any(r is None for r in rows):
        return None
    rows = np.asarray(rows, dtype=np.int64)
    if not np.array_equal(whole.items.n_candidates[rows], items.n_candidates) or \
            not np.array_equal(whole.items.label[rows], items.label):
        return None
    width = items.max_candidates
    scores = np.asarray(whole.scores)[rows][:, :width]
    mask = None
    if not (items.n_candidates == width).all():
        mask = np.arange(width)[None, :] < items.n_candidates[:, None]
    return ValidatedPart(items, scores, mask)


def add_subset_parts(subs: list, item_sets: dict) -> list[str]:
    """Give each validated file the declared subset parts its parts contain and no file of the submission covers;
    returns one line per part added ("videocon-atphard/causal/test from atp-hard")."""
    present = {(p.items.benchmark, p.items.config, p.items.split) for sub in subs for p in sub.parts}
    added: list[str] = []
    for sub in subs:
        for part in list(sub.parts):
            b, config, split = part.items.benchmark, part.items.config, part.items.split
            for small, whole in registry.get(b).subset_of.items():
                key = (b, small, split)
                if whole != config or key in present or key not in item_sets:
                    continue
                derived = subset_part(part, item_sets[key])
                if derived is not None:
                    sub.parts.append(derived)
                    present.add(key)
                    added.append(f"{b}/{small}/{split} from {config} (the same items' scores)")
    return added


__all__ = ["add_subset_parts", "subset_part"]
