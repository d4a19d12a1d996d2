"""Which video LLMs of the installed `transformers` hardneg scores, by which path, and which are verified.

The candidates are every model type with both a video processor and an image-text-to-text model in `transformers`
(`VIDEO_PROCESSOR_MAPPING_NAMES` ∩ `MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES`: 40 in the locked 5.24). For each:

* path: the hand-written family that serves it (`hardneg.models.vlm.families`), else the generic family (the
  model's own processor, `hardneg.models.vlm.generic`);
* protocols: what a served type scores by (`hardneg.benchmarks.base.VLM_PROTOCOLS`);
* verified: a tiny random-weight model of the type is built (`hardneg.models.vlm.tiny`) and the tiny-model tests
  run on it (ids equal to one chat-template + tokenizer call on the whole conversation, cached scores equal to a
  forward of those ids: tests/vlm/test_vlm_reference.py; cached == naive for every protocol:
  tests/vlm/test_vlm_scoring.py; the generic path against one processor call on the whole conversation:
  tests/vlm/test_vlm_generic.py). Those tests take their list of models from `VERIFIED` here, so a type marked
  verified is always one the suite tests.

`hardneg models` prints the table and docs/models.md holds the same one (tests/vlm/test_vlm_support.py checks
that they agree).
"""

from __future__ import annotations

from dataclasses import dataclass

from hardneg.models.vlm.tiny import DEFAULT as _TINY_DEFAULT
from hardneg.models.vlm.tiny import MODEL_TYPES as _TINY_TYPES
from hardneg.models.vlm.tiny import STAND_IN_TEMPLATES, cli_name

#: model type -> the tiny architecture (`tiny-vlm:<arch>`) whose tests verify it
VERIFIED: dict[str, str] = {t: a for a, t in _TINY_TYPES.items()}
#: types of the list that hardneg refuses, and why (`check_video_config` raises this before loading; `hardneg run`
#: says it first). InstructBLIP takes images only. InstructBLIP-Video's Q-Former reads the text: one processor call
#: on the whole conversation would feed it the caption too, while the original code gives it the instruction only
#: (salesforce/LAVIS `blip2_vicuna_instruct.py`, `Blip2VicunaInstruct.forward`: `text_Qformer` is the tokenised
#: `samples["text_input"]`, the target `text_output` goes to the LLM alone), and its processor takes 4 frames as
#: `images`, with the video tokens before the whole text, not where a chat template puts the video.
REFUSED: dict[str, str] = {
    "instructblip": "an image-only model: its processor (InstructBlipProcessor) takes no video and its model no video "
                    "input (use instructblipvideo's checkpoints for video)",
    "instructblipvideo": "its Q-Former reads the text (qformer_input_ids), which must be the instruction alone, never "
                         "the caption (LAVIS Blip2VicunaInstruct.forward); the generic path has no separate "
                         "Q-Former text, and its processor takes exactly 4 frames as `images` with the video tokens "
                         "before the whole text",
}
#: why a listed, served type is not verified in this version (what was tried)
NOT_VERIFIED_WHY: dict[str, str] = dict.fromkeys(
    ("cosmos3_omni", "glmga"),
    "transformers 5.24 maps no processor class to this type (PROCESSOR_MAPPING_NAMES), so there is no processor "
    "of its own to build a tiny model's video inputs or the test reference with (a checkpoint's processor_config "
    "would name one; which is not guessed here)")
#: path="auto" on a type with a hand-written family: which path it runs, and why (issue 52). auto may choose the
#: generic path where it is as fast as the hand-written family (within 10%, measured by `perf/bench_vlm.py
#: --paths`) AND gives the same scores; for every type below the scores are not the same, so auto keeps the
#: hand-written family whatever the speed (docs/scoring-speed.md, "The generic path across videos").
AUTO_PATH: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("qwen2_vl", "qwen2_5_vl"), (
        "hand-written", "its 3-D positions follow Qwen's published rule (hardneg.models.vlm.positions), which the "
        "installed get_rope_index that the generic path runs departs from (issue 32): other scores, not only "
        "another speed")),
    **dict.fromkeys(("llava_onevision", "llava_next_video", "video_llava"), (
        "hand-written", "its pixels are made on the model's device (hardneg.models.vlm.families), the generic "
        "path's by the processor on the CPU: equal scores on the same pixels (tests/vlm/test_vlm_generic.py), "
        "not bit-equal pixels, so choosing by speed would move published numbers between runs")),
}
#: the tests that verify a type on its tiny model
VERIFYING_TESTS = ("tests/vlm/test_vlm_generic.py", "tests/vlm/test_vlm_reference.py", "tests/vlm/test_vlm_scoring.py",
                   "tests/vlm/test_vlm_text.py")


def auto_path(model_type: str) -> tuple[str, str]:
    """(the path `path="auto"` runs for `model_type`, why): a type in `AUTO_PATH` as recorded there, any other
    type the generic family (it has no hand-written one)."""
    if model_type in AUTO_PATH:
        return AUTO_PATH[model_type]
    return "generic", "no hand-written family serves this type"


def tiny_names(path: str = "hand-written") -> tuple[str, ...]:
    """The `load_model` names of the verified types' tiny models (what the tiny-model tests parametrize over):
    those of types with a hand-written family (`path="hand-written"`: the engine's own tests), or all."""
    from hardneg.models.vlm.families import supported_model_types

    keep = set(supported_model_types()) if path == "hand-written" else set(VERIFIED)
    return tuple(cli_name(a) for t, a in VERIFIED.items() if t in keep)


@dataclass(frozen=True)
class Support:
    model_type: str
    path: str  # "hand-written: <family>", "generic", "refused: <why>" or "none"
    protocols: tuple[str, ...]
    verified: bool
    tiny: str | None  # `tiny-vlm:<arch>` of a verified type
    stand_in_template: str | None = None  # what the tiny model's chat template is, where it is not the published one

    @property
    def supported(self) -> bool:
        return bool(self.protocols)


def video_llm_types() -> list[str]:
    """Every model type of the installed `transformers` with a video processor and an image-text-to-text model."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    return sorted(set(VIDEO_PROCESSOR_MAPPING_NAMES) & set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES))


def support(model_type: str) -> Support:
    """How hardneg scores `model_type` (a `transformers` model type, e.g. "qwen2_vl")."""
    from hardneg.benchmarks.base import VLM_PROTOCOLS
    from hardneg.models.vlm.families import FAMILIES

    fam = next((f for f in FAMILIES if model_type in f.model_types), None)
    if fam is not None:
        path = f"hand-written: {fam.__name__}"
    elif model_type in video_llm_types():
        from hardneg.models.vlm.qwen3 import Qwen3VL

        path = "generic: Qwen3VL (Qwen's published layout)" if model_type in Qwen3VL.model_types else "generic"
    else:
        return Support(model_type, "none", (), False, None)
    if model_type in REFUSED:
        return Support(model_type, f"refused: {REFUSED[model_type]}", (), False, None)
    verified = model_type in VERIFIED
    tiny = f"tiny-vlm:{VERIFIED[model_type]}" if verified else None
    return Support(model_type, path, tuple(VLM_PROTOCOLS), verified, tiny,
                   STAND_IN_TEMPLATES.get(model_type) if verified else None)


def table() -> list[Support]:
    """One row per video-LLM model type of the installed `transformers`, plus any type a family serves that
    `transformers` does not list (none today)."""
    from hardneg.models.vlm.families import supported_model_types

    return [support(t) for t in sorted(set(video_llm_types()) | set(supported_model_types()))]


def markdown_table(rows: list[Support] | None = None) -> str:
    """The table as docs/models.md holds it."""
    rows = table() if rows is None else rows
    out = ["| model type | path | protocols | verified (tiny model) |", "|---|---|---|---|"]
    for r in rows:
        protocols = ", ".join(r.protocols) if r.protocols else "none (unsupported)"
        verified = f"yes (`{r.tiny}`)" if r.verified else "no"
        if not r.verified and r.model_type in NOT_VERIFIED_WHY:
            verified += f": {NOT_VERIFIED_WHY[r.model_type]}"
        if r.stand_in_template:
            verified += f"; stand-in chat template: {r.stand_in_template}"
        out.append(f"| `{r.model_type}` | {r.path} | {protocols} | {verified} |")
    return "\n".join(out) + "\n"


def model_type_of(model: str, revision: str | None = None) -> str | None:
    """The `transformers` model type of a `--model` value without loading the model: the built-in tiny models,
    a folder's config.json, or a Hub id's config.json when it is already in the local cache (None: unknown)."""
    import json
    from pathlib import Path

    if model == "tiny-vlm" or model.startswith("tiny-vlm:"):
        return _TINY_TYPES.get(model.split(":", 1)[1] if ":" in model else _TINY_DEFAULT)
    if model.startswith("vlm:") and not Path(model).exists():
        model = model[4:]
    config = Path(model).expanduser() / "config.json"
    if not config.is_file():
        try:
            from huggingface_hub import try_to_load_from_cache

            got = try_to_load_from_cache(model, "config.json", revision=revision)
        except Exception:  # not a Hub id (a name of another adapter), or no cache
            got = None
        config = Path(got) if isinstance(got, str) else None
    if config is None:
        return None
    try:
        got = json.loads(config.read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError):
        return None
    return got if isinstance(got, str) else None


def verification_note(model_type: str | None) -> str:
    """One line for `hardneg run`: whether the model's type is verified by a tiny-model test in this version."""
    if not model_type:
        return "model type unknown before loading (no config.json found): not checked against hardneg's tiny-model tests"
    s = support(model_type)
    if s.verified:
        note = f"model type {model_type!r}: verified in this version by tiny-model tests ({s.tiny}; `hardneg models`)"
        if s.stand_in_template:
            note += (f", under a stand-in chat template ({s.stand_in_template}): this checkpoint's own template was "
                     "not tested")
        if model_type in AUTO_PATH:
            path, why = auto_path(model_type)
            note += f"; path auto: {path} ({why})"
        return note
    if model_type in REFUSED:
        return f"model type {model_type!r}: refused by hardneg: {REFUSED[model_type]}"
    if s.supported:
        why = f" ({NOT_VERIFIED_WHY[model_type]})" if model_type in NOT_VERIFIED_WHY else ""
        return (f"model type {model_type!r}: served by {s.path} but NOT verified by a tiny-model test in this "
                f"version{why}")
    return (f"model type {model_type!r}: NOT verified (not a video LLM type of this transformers; "
            "`hardneg models` lists them)")


__all__ = ["AUTO_PATH", "NOT_VERIFIED_WHY", "auto_path", "REFUSED", "STAND_IN_TEMPLATES", "Support", "VERIFIED", "markdown_table", "model_type_of", "support", "table", "tiny_names", "verification_note",
           "video_llm_types"]
