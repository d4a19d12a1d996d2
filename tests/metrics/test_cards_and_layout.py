"""Every module folder has evaluate's layout and a metric card whose YAML parses and names the sections."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hardneg.metric_modules import METRIC_NAMES, metric_path

REQUIRED_YAML = {"title", "emoji", "colorFrom", "colorTo", "sdk", "sdk_version", "app_file", "pinned", "tags",
                 "description"}
REQUIRED_SECTIONS = ["## Metric Description", "## How to Use", "### Inputs", "### Output Values", "### Ties",
                     "## Examples", "## Limitations and Bias", "## Citation"]
ORIGINAL_RULE = {"rcad_accuracy": "feint6k", "mean_rank": "feint6k", "posrank": "posrank",
                 "correct_at_k": "fire", "mean_average_precision": "fire", "accuracy": "pessimistic"}


def front_matter(text: str) -> dict:
    match = re.match(r"^---\n(.*?)\n---\n", text, flags=re.S)
    assert match, "the card must start with a YAML block between --- lines"
    return yaml.safe_load(match.group(1))


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_card_yaml_and_sections(name):
    folder = Path(metric_path(name))
    text = (folder / "README.md").read_text(encoding="utf-8")
    meta = front_matter(text)
    assert REQUIRED_YAML <= set(meta), REQUIRED_YAML - set(meta)
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"
    assert "evaluate" in meta["tags"] and "metric" in meta["tags"]
    assert isinstance(meta["description"], str) and meta["description"].strip()
    positions = [text.find(s) for s in REQUIRED_SECTIONS]
    assert all(p >= 0 for p in positions), [s for s, p in zip(REQUIRED_SECTIONS, positions) if p < 0]
    assert positions == sorted(positions), "sections out of order"
    assert f'ties="{ORIGINAL_RULE[name]}"' in text  # the benchmark's original rule is documented
    assert "@inproceedings" in text


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_folder_layout(name):
    folder = Path(metric_path(name))
    for filename in (f"{name}.py", "README.md", "requirements.txt", "app.py"):
        assert (folder / filename).is_file(), filename
    requirements = (folder / "requirements.txt").read_text().split()
    assert any(r.startswith("video-hardneg") for r in requirements)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_one_import_per_line(name):
    """evaluate's import scanner misreads `import a, b`."""
    for path in Path(metric_path(name)).glob("*.py"):
        for line in path.read_text().splitlines():
            assert not re.match(r"^import\s+\S+\s*,", line), f"{path.name}: {line}"


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_card_examples_match_the_module(load, name):
    """The docstring example's printed output is what the module returns."""
    text = (Path(metric_path(name)) / f"{name}.py").read_text()
    block = text[text.index("Examples:"):]
    call = re.search(r">>> \w+\.compute\((.*?)\)\n    (\{[^\n]*\})\n", block, flags=re.S)
    assert call, "no compute example with output"
    args = call.group(1).replace("...", "").replace("\n", " ")
    out = eval(f"dict({args})")  # noqa: S307 - our own literal example
    assert repr(load(name).compute(**out)) == call.group(2)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_card_and_module_cite_what_the_benchmarks_declare(load, name):
    """The BibTeX is declared once, in the benchmark: the module reads it from there, and each entry the card
    prints is one of those declarations (whitespace aside), so a corrected title reaches every surface."""
    from hardneg import benchmarks

    def norm(text):
        return " ".join(text.split())

    def key(entry):
        return entry.split("{", 1)[1].split(",", 1)[0]

    declared = {key(b.citation): norm(b.citation) for b in benchmarks.all_benchmarks().values()}
    module_entries = ["@" + e for e in load(name).citation.split("@")[1:]]
    text = (Path(metric_path(name)) / "README.md").read_text(encoding="utf-8")
    card_entries = re.findall(r"^@\w+\{.*?^\}", text, flags=re.S | re.M)
    benchmark_entries = [e for e in module_entries + card_entries if key(e) in declared]
    assert {key(e) for e in module_entries} & set(declared) and {key(e) for e in card_entries} & set(declared)
    for entry in benchmark_entries:  # a method's paper (McSherry & Najork's ties) is cited beside, not declared
        assert norm(entry) == declared[key(entry)], entry
