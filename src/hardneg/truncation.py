"""Captions the model's tokenizer cuts: counted, named, and never a silent win (issue 33).

A text tower has a fixed context (CLIP: 77 tokens) and its tokenizer cuts a longer caption without a
word. When a hard negative differs from the positive only after the cut, the model sees two identical
texts: their scores tie, and the result says nothing about the model. This module asks the model's own
tokenizer, as the model calls it (`truncation=True, max_length=...`), which captions it cuts and which
items the cut leaves with two or more identical candidates. `hardneg.scoring.score_benchmark` records
the report in the predictions metadata (`text_cuts`), says so on standard error, and makes the identical
candidates' scores exactly equal, so the tie rule scores them (a tie is chance, never a win);
`hardneg.evaluation` copies the report into each result (results.json) with a note.

A model says how it tokenizes through `VideoTextModel.text_context()` (tokenizer, context length); a
model that does not (a user's score function, a video LLM, which does not cut) gets `None`: not known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

#: how many cut captions and identical items the report names (the counts are always complete)
NAMED = 20
#: the mark beside a result whose captions the tokenizer cut: the printed results table (`hardneg run`), the
#: board's tables; each place says what it means (issue 41: the cut was in results.json only)
CUT_MARK = "✂"
#: the most captions a stored count may claim (a board reads counts from submitted metadata)
_MAX_COUNT = 10**9


def cut_count(report: Any, key: str = "captions_cut") -> int:
    """A count of a `text_cuts` report as stored (predictions metadata, a submission): a non-negative int, else 0
    (a hostile or damaged value never reaches a table)."""
    value = report.get(key) if isinstance(report, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT else 0


def total(reports: Sequence[Any]) -> dict[str, Any] | None:
    """A benchmark's total over its configs' reports (results.json, under the benchmark's name): captions checked
    and cut, items left with identical candidates, and which configs were cut; None when no config's model said
    how it tokenizes."""
    known = [r for r in reports if isinstance(r, dict)]
    if not known:
        return None
    out = {k: sum(cut_count(r, k) for r in known) for k in ("captions", "captions_cut", "items_identical")}
    out["context"] = max((cut_count(r, "context") for r in known), default=0)
    out["configs_known"] = len(known)
    out["configs_unknown"] = len(reports) - len(known)
    return out


@dataclass
class CutReport:
    """What the tokenizer cut in one benchmark config."""

    context: int  # the model's text context, in tokens (special tokens included)
    captions: int = 0  # distinct captions checked
    captions_cut: int = 0  # of those, how many were longer than the context
    longest: int = 0  # tokens of the longest caption
    cut: list[dict[str, Any]] = field(default_factory=list)  # the first NAMED: caption, tokens, an item holding it
    items_identical: int = 0  # items where the cut made two or more candidates identical
    identical: list[dict[str, Any]] = field(default_factory=list)  # the first NAMED: item id, the identical positions
    groups: dict[str, list[list[int]]] = field(default_factory=dict, repr=False)  # every such item (not written)

    def to_dict(self) -> dict[str, Any]:
        return {"context": self.context, "captions": self.captions, "captions_cut": self.captions_cut,
                "longest": self.longest, "cut": self.cut, "items_identical": self.items_identical,
                "identical": self.identical}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CutReport":
        """The report as `to_dict` wrote it (into predictions metadata), for its message."""
        counts = {k: int(d.get(k) or 0) for k in ("context", "captions", "captions_cut", "longest", "items_identical")}
        return cls(**counts, cut=list(d.get("cut") or []), identical=list(d.get("identical") or []))

    def message(self) -> str | None:
        """One line for the run's output; None when nothing was cut."""
        if not self.captions_cut:
            return None
        text = (f"{self.captions_cut} of {self.captions} captions are longer than the model's {self.context}-token "
                f"context and were cut (longest {self.longest} tokens)")
        if self.items_identical:
            ids = ", ".join(str(e["id"]) for e in self.identical[:5])
            more = f" and {self.items_identical - 5} more" if self.items_identical > 5 else ""
            text += (f"; in {self.items_identical} items the cut made two or more candidates identical ({ids}{more}): "
                     "they tie, and a tie scores chance")
        return text


def text_context(model) -> tuple[Any, int] | None:
    """(tokenizer, context) of the model's text tower, or None when the model does not say."""
    get = getattr(model, "text_context", None)
    return get() if callable(get) else None


def _ids(tokenizer, texts: list[str], **kw) -> list[tuple[int, ...]]:
    return [tuple(x) for x in tokenizer(texts, **kw)["input_ids"]]


def check_items(model, items: Sequence[tuple[str, Sequence[str]]]) -> CutReport | None:
    """The cut report of `items` ((id, candidate captions) pairs; a retrieval query is an item of one caption),
    or None when the model does not say how it tokenizes."""
    ctx = text_context(model)
    if ctx is None:
        return None
    tokenizer, context = ctx
    texts = list(dict.fromkeys(t for _, caps in items for t in caps))
    report = CutReport(context=int(context), captions=len(texts))
    if not texts:
        return report
    # verbose=False: transformers' "longer than the specified maximum ... will result in indexing errors" warning
    # is about feeding such a sequence to the model, which never happens (the model cuts); the cut itself is
    # what this report counts and the run says (issue 41: the warning misled)
    full = _ids(tokenizer, texts, truncation=False, verbose=False)
    seen = _ids(tokenizer, texts, truncation=True, max_length=int(context))
    length = {t: len(f) for t, f in zip(texts, full)}
    cut = {t: s for t, f, s in zip(texts, full, seen) if len(f) > len(s)}
    report.longest = max(length.values())
    report.captions_cut = len(cut)
    if not cut:
        return report
    named: set[str] = set()
    as_seen = dict(zip(texts, seen))
    for item_id, caps in items:
        for t in caps:
            if t in cut and t not in named and len(report.cut) < NAMED:
                named.add(t)
                report.cut.append({"caption": t[:300], "tokens": length[t], "id": item_id})
        groups = identical_groups(caps, as_seen)
        if groups:
            report.items_identical += 1
            report.groups[item_id] = groups
            if len(report.identical) < NAMED:
                report.identical.append({"id": item_id, "candidates": groups})
    return report


def identical_groups(captions: Sequence[str], as_seen: dict[str, tuple[int, ...]]) -> list[list[int]]:
    """Positions of candidates that differ as text but are identical as the model sees them (after the cut)."""
    by_ids: dict[tuple[int, ...], list[int]] = {}
    for pos, t in enumerate(captions):
        by_ids.setdefault(as_seen.get(t, ("text", t)), []).append(pos)
    return [g for g in by_ids.values() if len(g) > 1 and len({captions[p] for p in g}) > 1]


def tie_identical(scores: list[float], groups: list[list[int]]) -> list[float]:
    """`scores` with each group of identical candidates given exactly the first one's score (a tie, not float noise)."""
    out = list(scores)
    for g in groups:
        for p in g[1:]:
            out[p] = out[g[0]]
    return out
