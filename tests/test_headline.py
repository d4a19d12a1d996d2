"""Issue 27: one definition of a benchmark's number. Each declaration says how its configs combine (`Headline`:
one named config, a mean over named disjoint configs, or item-pooled); the results engine computes it
(`hardneg.results.benchmark_value`), checked here by hand."""

from __future__ import annotations

import dataclasses
import math

import pytest

from hardneg import benchmarks, vocabulary
from hardneg.benchmarks import Benchmark
from hardneg.benchmarks.base import HEADLINE_RULES, Headline, Metric
from hardneg.results import Z95, benchmark_value


def _decl(overall, metrics=(Metric("Accuracy", "R@1", "x"),), **kw) -> Benchmark:
    base = benchmarks.get("contrast_sets")
    return dataclasses.replace(base, name="toy", overall=overall, metrics=metrics, config_descriptions={}, **kw)


def test_every_declaration_says_how_its_configs_combine():
    for name, decl in benchmarks.all_benchmarks().items():
        assert decl.overall is not None and decl.overall.rule in HEADLINE_RULES, name
        assert decl.overall_metric is not None and vocabulary.unit(decl.overall_metric.key) == "fraction", name
    # the two the issue names: ATP-Hard's number is its whole set, ViLMA's its `all` config
    assert benchmarks.get("videocon-atphard").overall == Headline("config", ("atp-hard",))
    assert benchmarks.get("vilma").overall.configs == ("all",)
    assert benchmarks.get("videocon-atphard").subset_of == {"causal": "atp-hard", "temporal": "atp-hard"}


def test_config_rule_is_that_configs_entry():
    decl = _decl(Headline("config", ("whole",)))
    metrics = {"whole": {"Accuracy": {"value": 0.4, "low": 0.3, "high": 0.5}},
               "part": {"Accuracy": {"value": 0.0, "low": 0.0, "high": 0.0}}}
    got = benchmark_value(decl, metrics, {"whole": 5, "part": 3})
    assert got == {"benchmark": "toy", "metric": "Accuracy", "rule": "config", "configs": ["whole"], "value": 0.4,
                   "low": 0.3, "high": 0.5, "n": 5}
    assert benchmark_value(decl, {"part": metrics["part"]}, {"part": 3}) is None  # its config missing: no number


def test_mean_and_pooled_by_hand():
    metrics = {"a": {"Accuracy": {"estimate": 0.2, "low": 0.1, "high": 0.3}},
               "b": {"Accuracy": {"estimate": 0.8, "low": 0.6, "high": 1.0}}}
    n = {"a": 10, "b": 30}
    mean = benchmark_value(_decl(Headline("mean", ("a", "b"))), metrics, n)
    se = math.sqrt((0.5 * 0.2 / (2 * Z95)) ** 2 + (0.5 * 0.4 / (2 * Z95)) ** 2)
    assert mean["value"] == pytest.approx(0.5) and mean["rule"] == "mean" and mean["n"] == 40
    assert (mean["low"], mean["high"]) == pytest.approx((0.5 - Z95 * se, 0.5 + Z95 * se))
    pooled = benchmark_value(_decl(Headline("pooled", ("a", "b"))), metrics, n)
    se = math.sqrt((0.25 * 0.2 / (2 * Z95)) ** 2 + (0.75 * 0.4 / (2 * Z95)) ** 2)
    assert pooled["value"] == pytest.approx((10 * 0.2 + 30 * 0.8) / 40)
    assert pooled["high"] == pytest.approx(min(1.0, pooled["value"] + Z95 * se))
    # every config (no names): the configs the data has; a named one the data lacks is left out (samples)
    assert benchmark_value(_decl(Headline("mean")), metrics, n)["configs"] == ["a", "b"]
    assert benchmark_value(_decl(Headline("mean", ("a", "b", "c"))), metrics, n)["configs"] == ["a", "b"]
    # a needed config with no value: no number
    assert benchmark_value(_decl(Headline("mean", ("a", "b"))), metrics, n, available=["a", "b"]) is not None
    assert benchmark_value(_decl(Headline("mean", ("a", "b"))), {"a": metrics["a"], "b": {}}, n) is None
    # intervals stay inside the metric's range
    top = {"a": {"Accuracy": {"value": 1.0, "low": 0.9, "high": 1.0}}, "b": {"Accuracy": {"value": 1.0, "low": 0.5,
                                                                                             "high": 1.0}}}
    assert benchmark_value(_decl(Headline("mean")), top, {"a": 1, "b": 1})["high"] == 1.0


def test_bad_declarations_are_clear_errors():
    with pytest.raises(ValueError, match="rule='median'"):
        Headline("median")
    with pytest.raises(ValueError, match="exactly one config"):
        Headline("config", ("a", "b"))
    with pytest.raises(ValueError, match="not one of its headline metrics"):
        _decl(Headline("config", ("a",), metric="MRR"))
    with pytest.raises(ValueError, match="plain mean over items"):
        _decl(Headline("pooled"), metrics=(Metric("Accuracy", "R@1", "x", over="category"),), breakdowns=("category",))
    with pytest.raises(ValueError, match="overall configs"):
        dataclasses.replace(benchmarks.get("vilma"), overall=Headline("config", ("nope",)))
    with pytest.raises(ValueError, match="declares no item set 'x'"):
        benchmarks.get("vilma").item_choice("x")


def test_a_declaration_without_a_rule_gets_the_documented_default():
    decl = _decl(None)
    assert decl.overall_rule(["only"]) == Headline("config", ("only",))
    assert decl.overall_rule(["a", "b"]) == Headline("mean")
