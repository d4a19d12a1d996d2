"""Video-text models behind one small interface (`VideoTextModel`), loadable by name or Hub id.

    from hardneg.models import load_model
    model = load_model("openai/clip-vit-base-patch32")   # or "tiny-clip", "microsoft/xclip-base-patch32",
    scores = model.score(frames, captions)                # "st:<id>", "blind-unigram", "blind-lm:gpt2"
"""

from hardneg.models.base import VideoTextModel
from hardneg.models.registry import available_models, load_model, register, resolve

__all__ = ["VideoTextModel", "available_models", "load_model", "register", "resolve"]
