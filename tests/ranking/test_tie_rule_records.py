"""A tie rule is one record (`hardneg.ranking.ties.TieRule`): the tables the ranking code reads are views of it."""

from __future__ import annotations

from hardneg.ranking import ties


def test_the_tie_tables_are_views_of_the_records():
    assert list(ties.TIE_RULES) == [r.name for r in ties.RULES]
    assert len(set(ties.TIE_RULES)) == len(ties.RULES)
    for rule in ties.RULES:
        assert ties.TIE_RULES[rule.name] == rule.meaning and rule.meaning.strip()
        assert ties.ORDER_OF_RULE.get(rule.name) == rule.order
        assert (rule.name in ties.INDEX_ORDER_RULES) == (rule.order == "index")
        assert (rule.name in ties.KEYED_ORDER_RULES) == (rule.order in ("random", "argsort"))
        assert ties.AP_CUTOFF_OF_RULE.get(rule.name) == rule.ap_cutoff
    # only the exact mean fixes no order; FIRE's original AP stops at its top 20
    assert [r.name for r in ties.RULES if r.order is None] == ["expected"]
    assert ties.AP_CUTOFF_OF_RULE == {"fire": 20}
