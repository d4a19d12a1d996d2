"""Drawing a table never fails because of one stored row: the row that cannot be drawn is shown as such.

A board table is drawn from every stored row at once, so one row holding a value no check foresaw (a row
stored before the check existed, or edited in the store) would otherwise take the whole page down for every
visitor (issue 29). `drawn_per_row` draws the table; only when that fails does it find the rows that fail on
their own, replaces each by a placeholder naming the model, logs it, and draws the rest.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from hardneg import guards

log = logging.getLogger("hardneg.leaderboard")

#: what a placeholder row says in place of its values
UNDRAWN = "this row could not be drawn (the operator's log has the reason); the rest of the board is unaffected"

#: how a placeholder row's model name reads where a table has no note column (Overall)
UNDRAWN_NAME = "{} (this row could not be drawn)"

R = TypeVar("R")


def shown_name(model) -> str:
    """A model name as a placeholder shows it: text, cut."""
    return (model if isinstance(model, str) else repr(model))[:120]


def drawn_per_row(draw: Callable, rows: list[R], placeholder: Callable[[R], R], *args, **kwargs):
    """draw(rows, *args, **kwargs); when that raises, draw again with every row that fails alone replaced by
    placeholder(row). A failure of the placeholders themselves (a bug in `draw`) is raised."""
    try:
        return draw(rows, *args, **kwargs)
    except Exception:  # noqa: BLE001 (one stored row must not take the page down; logged with its traceback)
        log.exception("drawing a table failed; drawing it row by row")

    def draws(row) -> bool:
        try:
            draw([row], *args, **kwargs)
            return True
        except Exception:  # noqa: BLE001
            log.warning("row %s could not be drawn; shown as a placeholder", shown_name(getattr(row, "model", "?")))
            return False

    return draw([r if draws(r) else placeholder(r) for r in rows], *args, **kwargs)


#: what a board row says when a stored submission behind it has damaged results (N1): the ids to look up
DAMAGED = ("the stored results of submission {ids} are damaged ({reason}); this row could not be drawn, the rest "
           "of the board is unaffected")

#: how such a row's model name reads where a table has no note column (Overall, its CSV, `leaderboard show`)
DAMAGED_NAME = "{model} (submission {ids}: stored results damaged, not drawn)"


#: what a board row says for stored parts whose benchmark, config or split this board has no items for (issue 42,
#: N16: a board rebuilt without a config, or a row restored into it, took every page load down)
NOT_ON_BOARD = ("stored parts {parts} (submission {ids}) are not on this board (no items for them here); not drawn, "
                "the rest of the board is unaffected")

#: how such a row's model name reads where a table has no note column (Overall, its CSV, `leaderboard show`)
NOT_ON_BOARD_NAME = "{model} ({parts}: not on this board, not drawn)"


@dataclass(frozen=True)
class Placeholder:
    """A stored row that fails its check at drawing time: drawn as a placeholder naming `id`, never raised."""

    id: str
    reason: str


def validate_stored_results(row) -> dict | Placeholder:
    """The `metrics` of a stored submission's results ({metric: {"estimate", "low", "high", "n", ...}}), unchanged,
    when every value the board reads has its type; else a Placeholder with the row's id and what is wrong.

    Why here and not only at submission: a row written by an older board, an edited store or a restored mirror
    never passed today's checks, and drawing reads it on every page load (issue 36, N1: `{}`, no `metrics`, a
    text estimate, `metrics` as a list took `leaderboard show` and the served page down before the per-row
    placeholder logic ran). Every drawing path reads stored results through this one function, so a stricter
    validator of stored rows can replace its body without touching the callers."""
    sub_id = shown_name(getattr(row, "id", "?"))
    results = getattr(row, "results", None)

    def bad(reason: str) -> Placeholder:
        log.warning("stored submission %s: %s; drawn as a placeholder", sub_id, reason)
        return Placeholder(sub_id, reason)

    if not isinstance(results, dict):
        return bad(f"results are {type(results).__name__}, not an object")
    metrics = results.get("metrics")
    if not isinstance(metrics, dict):
        return bad("no 'metrics' object" if metrics is None else f"'metrics' is {type(metrics).__name__}, not an object")
    if not metrics:
        return bad("'metrics' is empty")
    # the stored row passes the same guards as every entrance (hardneg.guards): one check per kind of value
    try:
        guards.json_tree(metrics, "metrics")
        for key, entry in metrics.items():
            name = shown_name(key)[:40]
            if not isinstance(entry, dict):
                return bad(f"metric {name!r} is {type(entry).__name__}, not an object")
            for field in ("estimate", "low", "high"):
                if entry.get(field) is not None:
                    guards.number(entry[field], f"metric {name!r} {field}")
            if entry.get("n") is not None:
                if not isinstance(entry["n"], int) or isinstance(entry["n"], bool):  # stored by hardneg as an int
                    return bad(f"metric {name!r} has an item count that is not a whole number")
                guards.whole(entry["n"], f"metric {name!r} n (item count)", lo=0)
    except guards.GuardError as e:
        return bad(f"{e.field} {e.problem}")
    return metrics


__all__ = ["DAMAGED", "DAMAGED_NAME", "NOT_ON_BOARD", "NOT_ON_BOARD_NAME", "Placeholder", "UNDRAWN", "UNDRAWN_NAME", "drawn_per_row", "shown_name",
           "validate_stored_results"]
