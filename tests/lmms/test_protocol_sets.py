"""Every protocol set says what it does: a benchmark without its own entry in a set is named with what it used."""

from __future__ import annotations

from hardneg import benchmarks
from hardneg.cli.run import protocol_notes


def test_a_fallback_of_protocol_set_authors_is_printed_per_benchmark():
    results = {}
    for name in ("vitatecs", "tempcompass"):
        spec = benchmarks.get(name).vlm_for("authors")
        for config in ("all", "x"):
            results[f"{name}/{config}"] = {"benchmark": name, "config": config,
                                           "run": {"model": {"prompt_source": spec.source}}}
    notes = protocol_notes(results)
    assert notes == ["note: protocol set 'authors': vitatecs declares no separate one; its default protocol (no "
                     "released protocol for video LLMs: a one-sentence description prompt (hardneg's own))"]


def test_every_generate_match_set_states_its_undecided_rule_and_source():
    for name in benchmarks.names():
        for s in ("default", "authors", "lmms-eval"):
            spec = benchmarks.get(name).vlm_for(s)
            if spec.protocol == "generate-match":
                assert spec.answers.undecided == "wrong" and spec.answers.source, (name, s)


def test_the_table_marks_a_row_that_depends_on_undecided_answers():
    from hardneg.run import format_table

    def row(config, undecided):
        return {"benchmark": "tempcompass", "config": config, "n": 4, "n_items": 4, "headline": ["Accuracy"],
                "metrics": {"Accuracy": {"value": 0.5}}, "chance": {"Accuracy": 0.5},
                "undecided": {"rule": "tie", "count": undecided, "note": "ties, as hardneg's default says"}}

    text = format_table({"tempcompass/all": row("all", 2), "tempcompass/speed": row("speed", 0)}, "t")
    lines = text.splitlines()
    assert [ln.split()[1] for ln in lines if ln.startswith("tempcompass") and "*" in ln] == ["all"]
    assert "* depends on undecided answers (tempcompass/all 2): ties, as hardneg's default says" in text
