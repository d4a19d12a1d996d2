"""Drawing a table never fails because of one stored row: the row that cannot be drawn is shown as such.

A board table is drawn from every stored row at once, so one row holding a value no check foresaw (a row
stored before the check existed, or edited in the store) would otherwise take the whole page down for every
visitor (issue 29). `drawn_per_row` draws the table; only when that fails does it find the rows that fail on
their own, replaces each by a placeholder naming the model, logs it, and draws the rest.
"""

from __future__ import annotations

import logging
from typing import Callable, TypeVar

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


__all__ = ["UNDRAWN", "UNDRAWN_NAME", "drawn_per_row", "shown_name"]
