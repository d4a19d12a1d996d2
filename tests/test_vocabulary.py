"""One results vocabulary on every surface (issue 19 §1).

Walks every declared benchmark (read from the registry, so benchmarks added later are covered
without touching this file) through every surface reachable offline: the declaration's `Metric`s,
the results engine and `results.json`, the terminal tables (`hardneg run`/`quickstart` and
`hardneg evaluate`), the `evaluate` modules' `compute`, the board's formatted table, the stored
submission, the dataset card and the README's benchmark table. Fails on a name that is not in
`hardneg.vocabulary`, on a machine value of a fraction outside [0, 1], on a display that is not
`vocabulary.display`, and on a header that does not say its unit.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from hardneg import benchmarks, vocabulary
from hardneg.benchmarks import Metric
from hardneg.results import evaluate_scores, standard_specs

REPO = Path(__file__).resolve().parents[1]
DECLARED = list(benchmarks.all_benchmarks())


# ----------------------------------------------------------------------------- the table itself


def test_every_entry_is_complete():
    assert len({e.key for e in vocabulary.ENTRIES}) == len(vocabulary.ENTRIES)
    for e in vocabulary.ENTRIES:
        assert e.unit in vocabulary.UNITS, e
        assert e.name == e.key  # one name on every surface
        assert e.definition and e.chance, e
        lo, hi = e.range
        if e.unit == vocabulary.FRACTION:
            assert (lo, hi) == (0.0, 1.0) and e.higher_better, e
        else:
            assert lo == 1.0 and not e.higher_better, e


@pytest.mark.parametrize("key, base", [
    ("R@1", "R@k"), ("R@10", "R@k"), ("C@5", "C@k"), ("C@10_original", "C@k_original"), ("mAP_original", "mAP_original"),
    ("PoSRank_noun", "PoSRank"), ("Accuracy_direction", "Accuracy"), ("Accuracy_all_pairs", "Accuracy"),
    ("mAP_original_msrvtt", "mAP_original"), ("MeanR", "MeanR"), ("Combined", "Combined"),
])
def test_keys_resolve_to_their_entry(key, base):
    assert vocabulary.entry(key).key == base


@pytest.mark.parametrize("key", ["n", "tie_rate", "R@1_ci", "accuracy", "R@k", "Recall@1", "MeanRank", ""])
def test_other_names_are_not_metrics(key):
    if key == "R@k":  # the template itself is an entry; its instances are R@1, R@2, ...
        assert vocabulary.is_metric(key)
        return
    assert not vocabulary.is_metric(key)
    with pytest.raises(vocabulary.UnknownMetricKey, match="hardneg.vocabulary"):
        vocabulary.entry(key)


def test_display_and_header_rules():
    assert vocabulary.display("R@1", 0.2734) == "27.3"
    assert vocabulary.display("PoSRank", 0.273, 0.072, 0.625) == "27.3 [7.2, 62.5]"
    assert vocabulary.display("MeanR", 3.4, 2.6, 4.0) == "3.40 [2.60, 4.00]"
    assert vocabulary.display("MRR", None) == "" and vocabulary.display("MRR", float("nan"), missing="n/a") == "n/a"
    assert vocabulary.header("C@5_original") == "C@5_original (%)" and vocabulary.header("MedianR") == "MedianR (rank)"
    assert vocabulary.header("R@1", "R@1 · msrvtt") == "R@1 · msrvtt (%)"
    with pytest.raises(ValueError, match="fractions"):
        vocabulary.check_fraction("Accuracy", 27.3)


def test_a_declaration_with_an_unknown_key_fails_loudly_with_the_fix():
    with pytest.raises(ValueError, match=r"Metric\('Recall@1'.*hardneg.vocabulary.*add an Entry"):
        Metric("Recall@1", "R@1", "what a paper called it")
    with pytest.raises(ValueError, match="contradicts the results vocabulary"):
        Metric("MeanR", "rank", "mean rank", higher_better=True)
    m = Metric("PoSRank", "RR", "legacy declaration", percent=False, over="category")
    assert m.percent is True and m.higher_better is True and m.unit == "fraction"  # the vocabulary decides


# ----------------------------------------------------------------------------- per benchmark


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    from hardneg.datasets import build_samples

    return build_samples(tmp_path_factory.mktemp("vocab-samples"))


@pytest.fixture(scope="module")
def item_sets(samples):
    from hardneg.items import load_item_sets

    return {b: load_item_sets(folder, b) for b, folder in samples.items()}


def _scores(items, seed=0):
    rng = np.random.default_rng(seed)
    width = int(items.max_candidates)
    scores = rng.random((len(items), width))
    mask = None if (items.n_candidates == width).all() else (np.arange(width)[None, :] < items.n_candidates[:, None])
    return scores, mask


def _declared_keys(decl, config: str | None = None) -> list[str]:
    keys = []
    for m in decl.metrics_for(config):
        keys.append(m.key)
        if m.baseline is not None:
            keys.append(m.baseline.key)
    return keys


def _results(item_sets, name):
    if name not in item_sets:
        pytest.skip(f"{name} declares no built-in sample")
    out = {}
    for (b, config, split), items in sorted(item_sets[name].items()):
        scores, mask = _scores(items)
        out[f"{b}/{config}/{split}"] = (items, scores, mask, evaluate_scores(items, scores, mask, n_resamples=50, seed=1))
    assert out, f"the {name} sample has no scoreable config"
    return out


@pytest.mark.parametrize("name", DECLARED)
def test_declaration_names_vocabulary_keys(name):
    decl = benchmarks.get(name)
    for key in _declared_keys(decl):
        e = vocabulary.entry(key)  # raises on an unknown key
        m = decl.metric(key) if key in decl.headline else next(x.baseline for x in decl.metrics
                                                                if x.baseline is not None and x.baseline.key == key)
        assert (m.percent, m.higher_better, m.unit) == (e.percent, e.higher_better, e.unit), key
    # a metric is named by what it computes: a multiple-choice top-1 of several options is Accuracy, or
    # R@k when the benchmark frames it as ranking captions; never both for the same per-item values
    specs = standard_specs(decl)
    by_source = {}
    for s in specs:
        if s.kind == "mean":
            by_source.setdefault(s.source, []).append(s.key)
    assert all(len(v) == 1 for v in by_source.values()), by_source


@pytest.mark.parametrize("name", DECLARED)
def test_results_json_holds_vocabulary_keys_as_fractions(item_sets, name):
    decl = benchmarks.get(name)
    for part, (_, _, _, result) in _results(item_sets, name).items():
        d = json.loads(json.dumps(result.to_dict()))
        config = d["config"]
        assert set(decl.headline_for(config)) <= set(d["metrics"]), part
        assert d["headline"] == decl.headline_for(config)
        # a metric declared for other configs only is not reported here under its name
        assert not {m.key for m in decl.metrics} - set(decl.headline_for(config)) & set(d["metrics"]), part
        for section in ("metrics", "chance"):
            for key, value in d[section].items():
                assert vocabulary.is_metric(key), f"{part}: {section} key {key!r} is not in the vocabulary"
                vals = [value] if section == "chance" else [value.get(x) for x in ("value", "low", "high")]
                for v in vals:
                    if v is None:
                        continue
                    if vocabulary.is_percent(key):
                        assert 0.0 <= v <= 1.0, f"{part}: {key} = {v} is not a fraction"
                    else:
                        assert v >= 1.0, f"{part}: rank {key} = {v}"
        for column, groups in d["breakdowns"].items():
            for g, entry in groups.items():
                assert all(vocabulary.is_metric(k) for k, v in entry.items() if isinstance(v, dict)), (column, g)
        if decl.is_retrieval:  # C@k with the original positive is C@k_original, never also R@k
            assert not [k for k in d["metrics"] if k.startswith("R@")], part


@pytest.mark.parametrize("name", DECLARED)
def test_terminal_tables_use_the_vocabulary(item_sets, name):
    from hardneg.evaluation import format_result
    from hardneg.run import table_rows

    parts = _results(item_sets, name)
    results = {part: r.to_dict() for part, (_, _, _, r) in parts.items()}
    rows = table_rows(results)
    decl = benchmarks.get(name)
    shown = {}
    for bench, config, _n, label, value, chance, _videos in rows:
        key = next(k for k in _declared_keys(decl) if vocabulary.header(k) == label)  # StopIteration: unknown label
        shown[(config, key)] = (value, chance)
    for part, res in results.items():
        config = res["config"]
        for key in _declared_keys(decl):
            if key not in res["metrics"]:
                continue
            value, chance = shown[(config, key)]
            assert value == vocabulary.display_entry(key, res["metrics"][key]), (part, key)
            assert chance == vocabulary.display(key, res["chance"].get(key)), (part, key)
        report = format_result({**res, "model_id": "m"})
        for key, entry in res["metrics"].items():
            assert f"{vocabulary.header(key)}" in report and vocabulary.display_entry(key, entry) in report, key
        assert not re.search(r"\b(R@\d+|MeanR|PoSRank|Accuracy|C@\d+)\s+%", report), "old 'R@1 %' label"


@pytest.mark.parametrize("name", DECLARED)
def test_evaluate_modules_output_the_same_keys_and_numbers(item_sets, name):
    from hardneg.metric_modules import load_metric

    decl = benchmarks.get(name)
    checked = 0
    for part, (items, scores, mask, result) in _results(item_sets, name).items():
        for key in _declared_keys(decl, items.config):
            e = vocabulary.entry(key)
            if e.module is None:
                continue
            module = load_metric(e.module)
            m = decl.metric(key) if key in decl.headline else None
            sel = np.ones(len(items), bool)
            if m is not None and m.where:  # only the rows of one kind (ViLMA's main or proficiency test)
                sel = np.asarray(items.groups[m.where[0]]) == m.where[1]
            rows = scores[sel] if mask is None else [list(r[k]) for r, k in zip(scores[sel], mask[sel])]
            kw = dict(predictions=rows, n_resamples=0)
            comparable = True
            if items.task == "retrieval":
                kw.update(references=[list(r) for r in items.relevant], original=items.original)
                ks = sorted({int(k[2:].split("_")[0]) for k in _declared_keys(decl) if k.startswith("C@")})
                if e.module == "correct_at_k":
                    kw["ks"] = ks
            else:
                kw["references"] = items.label[sel]
                if e.module == "posrank":
                    kw["pos"] = items.groups[m.over or "category"][sel]
                if e.module == "accuracy" and m.over:
                    kw["groups"] = items.groups[m.over][sel]
                if e.module == "rcad_accuracy":
                    kw["ks"] = list(decl.ks)
                    if m is not None and m.all_of:  # rows of one item count once, all right (ViLMA's Combined)
                        kw["group_ids"] = np.asarray(items.groups[m.all_of])[sel].astype(str)
                        # the module averages over items, the declaration over its `over` groups: equal on one group
                        comparable = not m.over or len(set(np.asarray(items.groups[m.over])[sel].tolist())) == 1
            out = module.compute(**kw)
            assert key in out, f"{part}: module {e.module} has no output {key!r}: {sorted(out)}"
            assert 0.0 <= out[key] <= 1.0 if e.percent else out[key] >= 1.0
            if comparable:
                assert out[key] == pytest.approx(result.metrics[key]["value"], abs=1e-9), (part, key)
            for k in out:
                if k.endswith("_ci") or k in ("n", "tie_rate", "ties", "n_per_pos", "n_per_group", "per_example"):
                    continue
                assert vocabulary.is_metric(k), f"module {e.module} outputs {k!r}, not a vocabulary key"
            checked += 1
    if not checked:
        pytest.skip(f"no evaluate module outputs {name}'s metrics ({', '.join(_declared_keys(decl))})")


@pytest.mark.parametrize("name", DECLARED)
def test_board_and_stored_submission(item_sets, name):
    from hardneg.leaderboard.board import BoardRow, board_columns, cells_from_results, render
    from hardneg.leaderboard.recompute import recompute

    parts = _results(item_sets, name)
    sets = {key: items for key, items in item_sets[name].items()}
    columns = board_columns(name, sets)
    by_part = {}
    for (b, config, split), items in sets.items():
        scores, mask = _scores(items)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        try:
            stored = recompute(items, scores, mask, n_resamples=50, seed=1)
        except ValueError as exc:  # a part the board cannot store as a whole split is not this test's concern
            pytest.skip(str(exc))
        metrics = stored.metrics if hasattr(stored, "metrics") else stored["metrics"]
        for key, m in metrics.items():
            assert vocabulary.is_metric(key), f"stored submission key {key!r}"
            if m.get("estimate") is not None and vocabulary.is_percent(key):
                assert 0.0 <= m["estimate"] <= 1.0, (key, m)
        by_part[(config, split)] = metrics
    row = BoardRow("org/model", "submitted", cells_from_results(columns, by_part))
    table = render([row], columns, shown=[c.name for c in columns]).iloc[0]
    for col in columns:
        header = next((h for h in table.index if h.startswith(col.name + " (") or h == col.name), None)
        assert header is not None, col.name
        if vocabulary.is_percent(col.metric):
            assert header == f"{col.name} (%)", header
        else:
            assert "(%)" not in header, header
        cell = row.cells.get(col.name)
        if cell is not None:
            assert table[header] == vocabulary.display(col.metric, cell.estimate, cell.low, cell.high), header
    assert parts


@pytest.mark.parametrize("name", DECLARED)
def test_dataset_card_lists_the_metrics(samples, name):
    if name not in samples:
        pytest.skip(f"{name} declares no built-in sample")
    card = (Path(samples[name]) / "README.md").read_text(encoding="utf-8")
    assert "## Metrics" in card
    section = card.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    for key in _declared_keys(benchmarks.get(name)):
        assert f"| `{key}` | {vocabulary.header(key)} |" in section, key
    assert "fractions in [0, 1]" in section


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _readme_rows() -> dict[str, str]:
    """Rows of README's benchmark table by their bold title and by a `name` written in the first cell."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\| \*\*(.+?)\*\*([^|]*)\|", line)
        if m:
            rows[_norm(m.group(1))] = line
            for name in re.findall(r"`([\w-]+)`", m.group(2)):
                rows[_norm(name)] = line
    return rows


@pytest.mark.parametrize("name", DECLARED)
def test_readme_table_names_the_declared_metrics(name):
    decl = benchmarks.get(name)
    rows = _readme_rows()
    row = rows.get(_norm(decl.name)) or rows.get(_norm(decl.title))
    assert row, (f"README's benchmark table has no row for {decl.title!r} (its bold title, or `{decl.name}`, in the "
                 "first column)")
    metrics_cell = row.split("|")[3]
    for k in decl.headline:
        assert re.search(rf"(?<![\w@]){re.escape(k)}(?![\w@])", metrics_cell), f"{decl.title}: {k} not in {metrics_cell!r}"
    allowed = {vocabulary.entry(s.key).key for s in standard_specs(decl)}
    for token in re.findall(r"[A-Za-z][\w@]*(?:_<\w+>)?", metrics_cell):
        token = re.sub(r"_<\w+>$", "", token)
        if vocabulary.is_metric(token):
            assert vocabulary.entry(token).key in allowed, f"{decl.title}'s README row names {token}, which it does not report"


def test_readme_quickstart_table_uses_unit_headers():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("$ hardneg quickstart", 1)[1].split("```", 1)[0]
    block = block.split("one number per benchmark", 1)[0]  # the per-config table (the second has its own columns)
    labels = [line.split()[3] + (" " + line.split()[4] if line.split()[4].startswith("(") else "")
              for line in block.splitlines()[1:] if line.strip() and line.split()[0] in DECLARED]
    assert labels
    for label in labels:
        key, _, unit = label.partition(" ")
        assert label == vocabulary.header(key), label


def test_average_is_over_one_unit():
    from hardneg.leaderboard import board

    average = getattr(board, "AVERAGE", None)  # the Overall column's header, where the board names it so
    if average is not None:
        assert "(%)" in average and "over" in average
    firsts = {vocabulary.unit(benchmarks.get(b).metrics[0].key) for b in DECLARED}
    assert firsts == {"fraction"}, "Overall averages each benchmark's first headline metric: they must share a unit"


def test_no_nan_display():
    assert vocabulary.display("R@1", math.nan) == ""


def test_docs_table_is_current():
    text = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert "## The results vocabulary" in text
    assert vocabulary.table_markdown() in text, "regenerate the table in docs/metrics.md (see the section's text)"
