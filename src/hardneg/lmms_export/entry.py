"""The `lmms_eval.models` entry point (pyproject.toml): lmms-eval's registry loads it when `lmms_eval.models` is
imported, so it imports nothing of lmms-eval's models and not the model class (hardneg.lmms_export.model), which
lmms-eval imports by its path only when `--model hardneg_vlm` is asked for."""

from __future__ import annotations

MODEL_ID = "hardneg_vlm"
CLASS_PATH = "hardneg.lmms_export.model.HardnegVLM"


def manifest():
    """lmms-eval's `ModelManifest` for `hardneg_vlm` (a simple model: `is_simple = True`)."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id=MODEL_ID, simple_class_path=CLASS_PATH)
