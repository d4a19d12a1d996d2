"""Video-native dual encoders behind `dual:<id>`: PE video, VideoPrism and X-CLIP, through their own processors.

Each takes the whole clip: our decoder's frames (`hardneg.video`, in order) go to the model's processor as one video
(`videos=`, `do_sample_frames=False`: the frames are already sampled), its pixels to the model's video tower, and the
captions to the processor's text call. The score is what the model's own `forward` computes, so that rankings are the
model's:

| type | video embedding | text embedding | score (`forward` output it equals) |
|---|---|---|---|
| `pe_video` | `video_head(video_encoder(...).pooler_output)` | `text_video_head` on the `[CLS]` hidden state | `logits_video_text`: dot x scale + bias |
| `videoprism` | `get_video_features` (L2-normalised) | `get_text_features` (L2-normalised) | `video_embeds @ text_embeds.T` (its `logits_per_text` is the softmax of this over the captions) |
| `xclip` | MIT video embedding + mean patch features | `text_projection` of the pooled text | `logits_per_video / logit_scale.exp()`: the cosine after the prompt generator |

Video embeddings stay cacheable: X-CLIP's prompt generator attends over the video's patch features, so its video
embedding carries them (D, then P x D) and `similarity` runs the generator, as `hardneg.models.xclip` does.

Frames: X-CLIP (its cross-frame MIT) and VideoPrism (its temporal position embeddings) take exactly the
`vision_config.num_frames` frames they were trained with; another count is refused with that field and the `--frames`
to use. PE video's frame transformer has rotary positions and a frame padding mask: it takes the frames it is given.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hardneg.models.base import VideoTextModel
from hardneg.models.dual_types import load_checkpoint


def _numpy_frames(video) -> np.ndarray:
    return video.cpu().numpy() if hasattr(video, "cpu") else np.asarray(video)


class VideoNativeEncoder(VideoTextModel):
    """One video-text model through its processor; a subclass says how its tower and score are called."""

    adapter = "dual-video"
    hub_model = True
    #: the model attributes the type's path calls (name -> what it gives), checked when loading
    needs: dict[str, str] = {}
    #: the config field that fixes the frame count, when the architecture fixes it
    frames_field: str | None = None
    #: processor keyword arguments for the frames (the captions': `_text_call`)
    video_kwargs: dict[str, Any] = {"do_sample_frames": False}

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, batch: int = 8, text_batch: int = 256):
        import torch

        load_checkpoint(self, model_id, device, fp16, revision, self.needs)
        self.num_frames = self._fixed_frames()
        self.max_length = self._max_length()
        self.batch, self.text_batch = batch, text_batch
        self._torch = torch

    # ------------------------------------------------------------------ what a type sets
    def _fixed_frames(self) -> int | None:
        if not self.frames_field:
            return None
        value: Any = self.model.config
        for part in self.frames_field.split("."):
            value = getattr(value, part)
        return int(value)

    def _max_length(self) -> int:
        return int(self.model.config.text_config.max_position_embeddings)

    def _text_call(self) -> dict[str, Any]:
        return {"padding": True, "truncation": True, "max_length": self.max_length}

    def _text_embed(self, enc) -> Any:
        raise NotImplementedError

    def _video_embed(self, pixels: dict, n_videos: int) -> Any:
        raise NotImplementedError

    # ------------------------------------------------------------------ the shared path
    def check_frames(self, n: int) -> None:
        """ValueError naming the config field when the architecture takes another number of frames."""
        if self.num_frames is not None and n != self.num_frames:
            raise ValueError(
                f"{self.model.config.model_type} model {self.model_id} takes exactly {self.num_frames} frames a video "
                f"(its config's {self.frames_field}) and got {n}: sample {self.num_frames} frames "
                f"(--frames {self.num_frames}, FrameSettings(n_frames={self.num_frames}))")

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = []
        for i in range(0, len(texts), self.text_batch):
            enc = self.processor(text=list(texts[i:i + self.text_batch]), return_tensors="pt",
                                 **self._text_call()).to(self.device)
            with torch.inference_mode():
                emb = self._text_embed(enc)
            out.append(emb.reshape(len(emb), -1).float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 0), np.float32)

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        torch = self._torch
        out = []
        for i in range(0, len(videos), self.batch):
            chunk = [_numpy_frames(v) for v in videos[i:i + self.batch]]
            for frames in chunk:
                self.check_frames(len(frames))
            enc = self.processor(videos=[list(f) for f in chunk], return_tensors="pt", **self.video_kwargs)
            pixels = {k: (v.to(self.device, self.model.dtype) if v.is_floating_point() else v.to(self.device))
                      for k, v in enc.items()}
            with torch.inference_mode():
                emb = self._video_embed(pixels, len(chunk))
            out.append(emb.reshape(len(chunk), -1).float().cpu().numpy())  # (videos, D): VideoPrism's is (videos, 1, D)
        return np.concatenate(out) if out else np.zeros((0, 0), np.float32)

    def identity(self) -> dict:
        return {**super().identity(), "frames_used": self.num_frames or "as sampled", "score": self.score_name}


class PeVideoDual(VideoNativeEncoder):
    """Perception Encoder video (`PeVideoModel`, transformers `models/pe_video/modeling_pe_video.py`, `forward`):
    `logits_video_text = video_head(video pooler) @ text_video_head(text hidden_states[-1][:, 0]).T * scale + bias`.
    The model's own `get_text_features` / `get_video_features` are defined inside its `__init__` in transformers
    5.24 (never bound), and the former pools differently from `forward`: the calls here are `forward`'s."""

    needs = {"video_encoder": "video tower", "video_head": "video projection", "text_model": "text tower",
             "text_video_head": "text projection"}
    score_name = "PE video logit (dot product x scale + bias)"

    def _max_length(self) -> int:
        limit = int(self.model.config.text_config.max_position_embeddings)
        return min(limit, int(getattr(self.tokenizer, "model_max_length", limit) or limit))

    def _text_embed(self, enc):
        m = self.model
        out = m.text_model(input_ids=enc["input_ids"], attention_mask=enc.get("attention_mask"),
                           output_hidden_states=True)
        return m.text_video_head(out.hidden_states[-1][:, 0])

    def _video_embed(self, pixels, n_videos):
        m = self.model
        out = m.video_encoder(pixel_values_videos=pixels["pixel_values_videos"],
                              padding_mask_videos=pixels.get("padding_mask_videos"))
        return m.video_head(out.pooler_output)

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        torch = self._torch
        m = self.model
        v = torch.as_tensor(np.asarray(video_embeddings, np.float32))
        t = torch.as_tensor(np.asarray(text_embeddings, np.float32))
        with torch.inference_mode():
            scale = m.text_video_logit_scale.detach().float().cpu()
            bias = m.text_video_logit_bias.detach().float().cpu()
            return ((v @ t.T) * scale + bias).numpy()


class VideoPrismDual(VideoNativeEncoder):
    """VideoPrism LvT (`VideoPrismClipModel`, transformers `models/videoprism/modeling_videoprism.py`, `forward`):
    `similarity_matrix = video_embeds @ text_embeds.T` of its L2-normalised embeddings; its `logits_per_text` is
    `exp` of that normalised over the captions, an increasing function of it for each video. Captions take the
    processor's own text defaults (`padding="max_length"`, `max_length=64`, as the model card calls it); its text
    tower reads a class token appended after the padding, with no position of its own and the padding masked, so in
    transformers 5.24 another padding length gives the same score (checked on the tiny model)."""

    needs = {"get_text_features": "text features", "get_video_features": "video features"}
    frames_field = "vision_config.num_frames"
    score_name = "cosine similarity"

    def _max_length(self) -> int:
        defaults = getattr(type(self.processor), "text_kwargs", None) or {}
        return int(defaults.get("max_length") or self.model.config.text_config.max_position_embeddings)

    def _text_call(self) -> dict[str, Any]:
        return {}

    def _text_embed(self, enc):
        return self.model.get_text_features(input_ids=enc["input_ids"],
                                            attention_mask=enc.get("attention_mask")).pooler_output

    def _video_embed(self, pixels, n_videos):
        return self.model.get_video_features(pixel_values_videos=pixels["pixel_values_videos"]).pooler_output

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        return np.asarray(video_embeddings, np.float32) @ np.asarray(text_embeddings, np.float32).T


class XClipDual(VideoNativeEncoder):
    """X-CLIP (`XCLIPModel`, transformers `models/x_clip/modeling_x_clip.py`, `forward`): the frames' CLIP class
    embeddings through the cross-frame MIT give the video embedding; each caption's embedding is refined by the
    prompt generator over the video's mean patch features; the score is their cosine (`logits_per_video` without
    `logit_scale.exp()`). The processor's pixels are (videos, frames, ...) with the microsoft/xclip-* checkpoints'
    VideoMAE image processor; a processor that returns the frames flat (CLIPImageProcessor) is reshaped to that."""

    needs = {"vision_model": "frame tower", "mit": "cross-frame transformer", "prompts_generator": "video prompts",
             "text_model": "text tower"}
    frames_field = "vision_config.num_frames"
    video_kwargs: dict[str, Any] = {}
    score_name = "cosine similarity"

    @property
    def dim(self) -> int:
        return int(self.model.config.projection_dim)

    def _text_embed(self, enc):
        m = self.model
        text = m.text_model(input_ids=enc["input_ids"], attention_mask=enc.get("attention_mask"))
        return m.text_projection(text.pooler_output)

    def _video_embed(self, pixels, n_videos):
        torch = self._torch
        m = self.model
        px = pixels["pixel_values"]
        px = px.reshape(-1, *px.shape[-3:])  # (videos * frames, C, H, W), videos first
        t = px.shape[0] // n_videos
        vis = m.vision_model(pixel_values=px)
        video = m.mit(m.visual_projection(vis.pooler_output).view(n_videos, t, -1)).pooler_output
        img = m.prompts_visual_layernorm(vis.last_hidden_state[:, 1:, :]) @ m.prompts_visual_projection
        img = img.view(n_videos, t, -1, video.shape[-1]).mean(dim=1)
        return torch.cat([video, img.reshape(n_videos, -1)], dim=1)

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        torch = self._torch
        m = self.model
        d = self.dim
        v = torch.as_tensor(np.asarray(video_embeddings, np.float32), device=self.device)
        t = torch.as_tensor(np.asarray(text_embeddings, np.float32), device=self.device)
        video, img = v[:, :d], v[:, d:].reshape(len(v), -1, d)
        rows = []
        with torch.inference_mode():
            for j in range(len(v)):  # the prompt generator per video: (1, T, D)
                tj = t.unsqueeze(0).to(m.dtype)
                tj = (tj + m.prompts_generator(tj, img[j:j + 1].to(m.dtype))).float()[0]
                rows.append((tj / tj.norm(dim=-1, keepdim=True)) @ (video[j] / video[j].norm()))
        return torch.stack(rows).cpu().numpy() if rows else np.zeros((0, len(t)), np.float32)


#: model_type -> the class serving it
VIDEO_ENCODERS: dict[str, type[VideoNativeEncoder]] = {"pe_video": PeVideoDual, "videoprism": VideoPrismDual,
                                                      "xclip": XClipDual}

__all__ = ["VIDEO_ENCODERS", "VideoNativeEncoder", "PeVideoDual", "VideoPrismDual", "XClipDual"]
