"""Every tiny video LLM folder is a complete Hub checkpoint: `transformers`' auto classes load it unchanged.

What lmms-eval's wrappers (and any user) call on a Hub id: `AutoTokenizer` (with the chat template),
`AutoImageProcessor`, `AutoProcessor` (its video processor runs on torchvision) and the family's model class
through `AutoModelForImageTextToText`. Qwen2-VL and Qwen2.5-VL first: lmms-eval's Qwen2-VL wrapper loads them
with `AutoProcessor` + `Qwen2VLForConditionalGeneration`.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from hardneg.models.vlm.tiny import ARCHITECTURES, HUB, MODEL_TYPES, tiny_vlm_path
from waves import arch_params


def test_every_architecture_is_checked():
    assert set(MODEL_TYPES) == set(ARCHITECTURES) >= set(HUB)


def _processor_class(arch: str) -> str:
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    return PROCESSOR_MAPPING_NAMES[MODEL_TYPES[arch]]


@pytest.mark.parametrize("arch", sorted(HUB))
def test_folder_holds_every_hub_file(arch):
    folder = tiny_vlm_path(arch)
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
                 "processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json"):
        assert (folder / name).is_file(), f"{arch}: {name} missing"
    import transformers

    processor, image_cls, video_cls, _ = HUB[arch]
    video = json.loads((folder / "video_preprocessor_config.json").read_text())
    assert video["video_processor_type"] == video_cls and hasattr(transformers, video_cls)
    assert json.loads((folder / "processor_config.json").read_text())["processor_class"] == processor
    assert hasattr(transformers, processor)
    # the processor classes are the ones transformers itself maps this model type to
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    assert PROCESSOR_MAPPING_NAMES[MODEL_TYPES[arch]] == processor


@pytest.mark.parametrize("arch", arch_params(ARCHITECTURES))
def test_auto_classes_load_the_folder(arch):
    from transformers import AutoConfig, AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    folder = tiny_vlm_path(arch)
    assert AutoConfig.from_pretrained(folder).model_type == MODEL_TYPES[arch]
    tok = AutoTokenizer.from_pretrained(folder)
    text = tok.apply_chat_template([{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "hi"}]}],
                                   tokenize=False, add_generation_prompt=True)
    assert "hi" in text
    if arch in HUB:  # (the generic tiny models' processors are saved by save_pretrained: checked below)
        image = AutoImageProcessor.from_pretrained(folder)
        assert type(image).__name__.removesuffix("Pil").removesuffix("Fast") == HUB[arch][1].removesuffix("Fast")
        px = image(images=[np.zeros((16, 16, 3), np.uint8)], return_tensors="pt")
        assert any(k.startswith("pixel_values") for k in px)
    model = AutoModelForImageTextToText.from_pretrained(folder)
    assert model.config.model_type == MODEL_TYPES[arch]


@pytest.mark.parametrize("arch", arch_params(ARCHITECTURES))
def test_auto_processor_loads_the_folder(arch):
    """`AutoProcessor` (torchvision: the models extra) builds the family's processor, and its video input makes as
    many video tokens as the family counts (`hardneg.models.vlm.families`)."""
    import torch
    from transformers import AutoConfig, AutoProcessor

    from hardneg.models.vlm.families import family_for, processor_settings

    folder = tiny_vlm_path(arch)
    proc = AutoProcessor.from_pretrained(folder)
    assert type(proc).__name__ == _processor_class(arch)
    config = AutoConfig.from_pretrained(folder)
    if family_for(config) is None:  # a generic type: its own processor is the family (tests/vlm/test_vlm_generic.py)
        assert proc.video_processor is not None
        return
    fam = family_for(config)(config, processor_settings(str(folder)))
    frames = np.random.default_rng(0).integers(0, 255, (8, 24, 32, 3), dtype=np.uint8)
    msgs = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "a man"}]}]
    text = proc.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    out = proc(text=[text], videos=[frames], return_tensors="pt")
    video_id = config.video_token_id if hasattr(config, "video_token_id") else config.video_token_index
    assert int((out["input_ids"] == video_id).sum()) == fam.video_inputs(frames, torch.float32, "cpu").n_tokens
