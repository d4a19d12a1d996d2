"""A tiny model type is one record (`hardneg.models.vlm.tiny.record.TinyType`), not a row in parallel tables.

Adding a type touches its record (in its family's module, `tiny/<family>.py`) and its test; these tests keep that
true: the type's name is written in at most 2 places of `src/hardneg/models`, the registry refuses a type given
twice, the old tables are views of the records, and the tiny folders rebuild byte-identical (the sha256 of every
file of every folder, recorded in `tiny_folders.sha256` for `tiny_vlm_v<VERSION>`).
"""

from __future__ import annotations

import ast
import hashlib
import io
import tokenize
from collections import Counter
from pathlib import Path

import pytest

from hardneg.models.vlm import tiny
from hardneg.models.vlm.tiny import registry
from waves import arch_params

MODELS = Path(tiny.__file__).resolve().parents[2]  # src/hardneg/models
HASHES = Path(__file__).with_name("tiny_folders.sha256")


def string_places(source: str, names: set[str]) -> dict[str, set[int]]:
    """The places of `source` that write each of `names`: the lines holding a Python string literal (a STRING
    token, its value read with `ast.literal_eval`) whose whole value is the name, a key or entry of a table, a
    default, a comparison, the name in a record. A line is one place however often it holds the name (a record
    whose model type is spelt like its name is one place). Prose that mentions the type inside a longer text (a
    docstring, a help line "tiny-vlm:<name>", an error message) is not a place: no table is edited in step with it.
    f-strings and byte strings are skipped (no type name is built in one)."""
    out: dict[str, set[int]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.STRING or tok.string.lstrip("rRuU").startswith(("f", "F", "b", "B")):
            continue
        value = ast.literal_eval(tok.string)
        if value in names:
            out.setdefault(value, set()).add(tok.start[0])
    return out


def places_in_models(strict: bool = False) -> Counter:
    """Places per tiny type name over every .py file under src/hardneg/models. Not counted unless `strict`: a
    family class's own name (`name = "video-llava"`, `name = "qwen3-vl"`: the family that serves the type, which
    `hardneg models` shows), a line that spells a type's name but names something else."""
    names = set(tiny.ARCHITECTURES)
    total: Counter = Counter()
    for path in sorted(MODELS.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for name, found in string_places("\n".join(lines) + "\n", names).items():
            total[name] += sum(strict or not lines[n - 1].startswith("    name = ") for n in found)
    return total


def test_the_place_count_can_fail():
    src = 'A = {"qwen2-vl": 1}\nB = ("qwen2-vl", "other")\nif x == "qwen2-vl": pass\n"""qwen2-vl in prose"""\n' \
          'y = f"tiny-vlm:{a}"\nT("qwen2-vl", "qwen2-vl")\n'
    assert string_places(src, {"qwen2-vl"})["qwen2-vl"] == {1, 2, 3, 6}


def test_a_tiny_type_is_named_in_at_most_two_places():
    counts = places_in_models()
    for name in tiny.ARCHITECTURES:
        assert 1 <= counts[name] <= 2, (name, counts[name])
    # with a family's own name counted too (video-llava, qwen3-vl), still at most 2: the Hub-id hints are the
    # records' `hub_ids`
    strict = places_in_models(strict=True)
    assert all(strict[name] <= 2 for name in tiny.ARCHITECTURES), strict


def test_hub_ids_tell_a_video_llm_from_its_records():
    from hardneg.models.vlm.model import _is_video_llm_id

    assert _is_video_llm_id("Qwen/Qwen2-VL-7B-Instruct") and _is_video_llm_id("lmms-lab/LLaVA-Video-7B-Qwen2")
    assert _is_video_llm_id("zai-org/GLM-4.1V-9B-Thinking") and _is_video_llm_id("OpenGVLab/InternVL3-8B-hf")
    assert not _is_video_llm_id("openai/clip-vit-base-patch32") and not _is_video_llm_id("Qwen/Qwen2-7B-Instruct")


def test_the_registry_refuses_a_type_given_twice(monkeypatch):
    from hardneg.models.vlm.tiny import qwen

    monkeypatch.setattr(registry, "FAMILIES", (qwen, qwen))
    with pytest.raises(RuntimeError, match="registered twice"):
        registry._collect()


def test_an_unknown_type_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="use one of qwen2-vl"):
        tiny.tiny_type("no-such-type")
    with pytest.raises(ValueError, match="tiny-vlm architecture"):
        tiny.build_tiny_vlm("unused", "no-such-type")


def test_the_tables_are_views_of_the_records():
    assert tiny.ARCHITECTURES[0] == tiny.DEFAULT and tiny.cli_name(tiny.DEFAULT) == "tiny-vlm"
    assert len(tiny.TYPES) == len(set(tiny.MODEL_TYPES.values())) == len(tiny.ARCHITECTURES)
    for name, rec in tiny.TYPES.items():
        assert tiny.MODEL_TYPES[name] == rec.model_type and tiny.TOKENIZERS[name] == rec.tokenizer
        assert tiny.MORE_TOKENS.get(name, ()) == rec.tokens
        assert tiny.NAMED_TOKENS.get(name) == (dict(rec.named_tokens) if rec.named_tokens else None)
        assert (rec.model_type in tiny.PUBLISHED) != (rec.model_type in tiny.STAND_IN_TEMPLATES)
        assert (name in tiny.HUB) == (rec.hub is not None)
        if not rec.default:
            assert tiny.cli_name(name) == f"tiny-vlm:{name}"


def recorded_hashes() -> dict[str, dict[str, str]]:
    """{type: {file: sha256}} from `tiny_folders.sha256` (lines "<sha256> <type>/<file>")."""
    out: dict[str, dict[str, str]] = {}
    for line in HASHES.read_text(encoding="utf-8").splitlines():
        digest, path = line.split(" ", 1)
        name, file = path.split("/", 1)
        out.setdefault(name, {})[file] = digest
    return out


def test_every_type_has_recorded_hashes():
    assert set(recorded_hashes()) == set(tiny.ARCHITECTURES)


@pytest.mark.parametrize("arch", arch_params(tiny.ARCHITECTURES))
def test_the_folder_rebuilds_byte_identical(arch, tmp_path):
    """The folder `tiny_vlm_v<VERSION>` users have cached is what the builder writes today. A change that moves a
    byte must bump `tiny.VERSION` (the cache folder's name) and rewrite `tiny_folders.sha256`:
    `python -c "from hardneg.models.vlm.tiny import *; [build_tiny_vlm(f'OUT/{a}', a) for a in ARCHITECTURES]"`
    then `sha256sum` every file as "<sha256> <type>/<file>", sorted. The hashes are those of the pinned environment
    (constraints.txt: torch's CPU generator, tokenizers, transformers' serialisation, matplotlib's DejaVu Sans that
    the ERNIE folder copies); a failure after a pinned version moves is a folder change too."""
    out = tiny.build_tiny_vlm(tmp_path / arch, arch)
    got = {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
           for p in sorted(out.rglob("*")) if p.is_file()}
    assert got == recorded_hashes()[arch]
