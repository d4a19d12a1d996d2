"""X-CLIP (`microsoft/xclip-base-patch32`) through `transformers`.

X-CLIP's score is not a plain dot product: its text embedding is refined by a prompt
generator that attends over the video's patch features. To keep video embeddings cacheable,
`encode_video` returns the video embedding followed by the mean patch features, and
`similarity` runs the prompt generator on them, reproducing `XCLIPModel.forward`'s logits
(without the logit scale).

`dual:<id>` serves X-CLIP too, through the checkpoint's own processor (`hardneg.models.dual_video.XClipDual`). This
adapter stays for X-CLIP Hub ids because it is faster (its tensor pixel pipeline; perf/bench_dual.py) and equal to it
on frames at the model's input size (tests/vlm/test_dual_encoders.py); it resizes other frames with PIL where the
checkpoint's VideoMAEImageProcessor uses torchvision (a slight difference), and it samples
`vision_config.num_frames` frames from the decoded ones where `dual:` requires exactly that many.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hardneg.models.base import VideoTextModel, hub_revision, pick_device, torch_dtype
from hardneg.models.clip import as_numpy_frames, preprocess_frames
from hardneg.models.preprocess import PixelPipeline
from hardneg.models.registration import register
from hardneg.video import uniform_indices

DEFAULT_XCLIP = "microsoft/xclip-base-patch32"


def _frames(video):
    """A video's frames as an indexable array: numpy, or a torch tensor left where it is."""
    return video if hasattr(video, "shape") else np.asarray(video)


def _is_xclip_id(model: str) -> bool:
    low = model.lower()
    return "xclip" in low or "x-clip" in low


@register("xclip", f"X-CLIP video-text model with video-specific prompting (default {DEFAULT_XCLIP})", matches=_is_xclip_id)
class XCLIPVideoModel(VideoTextModel):
    default_model_id = DEFAULT_XCLIP  # the Hub id loaded when none is given
    hub_model = True  # loads from_pretrained: checked before loading (hardneg.hub_access)
    adapter = "xclip"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, batch: int = 32):
        import torch
        from transformers import AutoTokenizer, CLIPImageProcessorPil, XCLIPModel

        self.model_id = model_id or DEFAULT_XCLIP
        self.device = pick_device(device)
        dt = torch_dtype(self.device, fp16)
        self.dtype = str(dt).replace("torch.", "")
        kw = {"revision": revision} if revision else {}
        self.model = XCLIPModel.from_pretrained(self.model_id, dtype=dt, **kw).to(self.device).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_id, **kw)
        # X-CLIP ships a VideoMAE processor config: same resize/crop/normalise as CLIP's, pillow backend
        self.processor = CLIPImageProcessorPil.from_pretrained(self.model_id, **kw)
        self.pixels = PixelPipeline.for_processor(self.processor)  # tensor preprocessing, same values
        self.revision = hub_revision(self.model_id, revision, self.model)
        self.num_frames = int(self.model.config.vision_config.num_frames)
        self.dim = int(self.model.config.projection_dim)
        self.max_length = int(self.model.config.text_config.max_position_embeddings)
        self.batch = batch
        self._torch = torch

    def identity(self) -> dict:
        return {**super().identity(), "frames_used": self.num_frames}

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = []
        for i in range(0, len(texts), 256):
            tok = self.tokenizer(list(texts[i:i + 256]), padding=True, truncation=True, max_length=self.max_length,
                                 return_tensors="pt").to(self.device)
            with torch.inference_mode():
                text = self.model.text_model(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"])
                emb = self.model.text_projection(text[1])
            out.append(emb.float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, self.dim), np.float32)

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        """(V, D + P*D): the video embedding, then the P mean patch features (for prompting)."""
        torch = self._torch
        m = self.model
        out = []
        for i in range(0, len(videos), self.batch):
            chunk = [_frames(v)[uniform_indices(len(v), self.num_frames)] for v in videos[i:i + self.batch]]
            if self.pixels is not None:
                pix = self.pixels(chunk, self.device, m.dtype)
            else:
                frames = np.concatenate([as_numpy_frames(v) for v in chunk])
                pix = preprocess_frames(self.processor, frames).to(self.device, m.dtype)
            b = len(chunk)
            with torch.inference_mode():
                vis = m.vision_model(pixel_values=pix)
                cls = m.visual_projection(vis[1]).view(b, self.num_frames, -1)
                video = m.mit(cls)[1]
                img = m.prompts_visual_layernorm(vis[0][:, 1:, :]) @ m.prompts_visual_projection
                img = img.view(b, self.num_frames, -1, video.shape[-1]).mean(dim=1)
            out.append(torch.cat([video, img.reshape(b, -1)], dim=1).float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, self.dim), np.float32)

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        torch = self._torch
        m = self.model
        v = torch.as_tensor(np.asarray(video_embeddings, np.float32), device=self.device)
        t = torch.as_tensor(np.asarray(text_embeddings, np.float32), device=self.device)
        d = self.dim
        video, img = v[:, :d], v[:, d:].reshape(len(v), -1, d)
        rows = []
        with torch.inference_mode():
            for j in range(len(v)):  # prompt generator per video: (1, T, D)
                tj = t.unsqueeze(0).to(m.dtype)
                tj = tj + m.prompts_generator(tj, img[j:j + 1].to(m.dtype))
                tj = tj.float()[0]
                tj = tj / tj.norm(dim=-1, keepdim=True)
                vj = video[j] / video[j].norm()
                rows.append(tj @ vj)
        return torch.stack(rows).cpu().numpy() if rows else np.zeros((0, len(t)), np.float32)
