"""CLIP-style image preprocessing as batched tensor operations on the model's device.

`PixelPipeline` gives the `pixel_values` of a Hugging Face CLIP image processor (resize the
shorter side, center crop, rescale, normalise) for whole videos at once. Frames travel to the
device as cropped uint8 (4x fewer bytes than floats, from pinned memory on a GPU), and rescale +
normalise is one table lookup there: the table is computed by the processor's own `rescale` and
`normalize` on the 256 possible byte values, so the result is bit-identical to the processor.

Resizing: numpy frames that need it are resized with PIL exactly as the processor does (the
default frames, 224 px on the shorter side, need none for 224 px models); torch frames (the
"torchcodec" decoder, possibly on the GPU) are resized on their device with torch's antialiased
bicubic, which differs from PIL by a few levels (docs/scoring-speed.md states the measured
difference; tests/scoring/test_preprocess.py holds it to a tolerance).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hardneg.threads import chunks, thread_map


def _size(cfg: Any, key: str) -> Any:
    return getattr(cfg, key, None) if not isinstance(cfg, dict) else cfg.get(key)


def resize_to(frames, height: int, width: int):
    """(N, 3, H, W) uint8 tensor -> (N, 3, height, width) uint8, antialiased bicubic on its device.

    Like PIL: the width first, rounded to bytes, then the height (PIL keeps 8-bit pixels between
    its two passes; doing the same removes most of the difference on upscaling).
    """
    import torch
    import torch.nn.functional as F

    def one_pass(x, h, w):
        out = F.interpolate(x.float(), size=(h, w), mode="bicubic", antialias=True, align_corners=False)
        return out.round_().clamp_(0, 255).to(torch.uint8)

    h0, w0 = frames.shape[-2:]
    if w0 != width:
        frames = one_pass(frames, h0, width)
    if h0 != height:
        frames = one_pass(frames, height, width)
    return frames


def resize_shorter_side(frames, size: int):
    """(N, 3, H, W) uint8 tensor with its shorter side at `size` (the decoder's rounding: round(w * scale))."""
    h, w = frames.shape[-2:]
    scale = size / min(w, h)
    if scale == 1:
        return frames
    return resize_to(frames, max(1, round(h * scale)), max(1, round(w * scale)))


class PixelPipeline:
    """The `pixel_values` of a CLIP-style image processor, computed on tensors.

    Raises ValueError for processor settings it does not reproduce (callers then use the
    processor itself).
    """

    def __init__(self, processor):
        if getattr(processor, "do_pad", None):
            raise ValueError("padding processors are not supported")
        self.do_resize = bool(getattr(processor, "do_resize", False))
        size = getattr(processor, "size", None)
        self.shortest_edge = self.fixed_hw = None
        if self.do_resize:
            if _size(size, "shortest_edge") and not _size(size, "longest_edge"):
                self.shortest_edge = int(_size(size, "shortest_edge"))
            elif _size(size, "height") and _size(size, "width") and not _size(size, "shortest_edge"):
                self.fixed_hw = (int(_size(size, "height")), int(_size(size, "width")))
            else:
                raise ValueError(f"resize to {size} is not supported")
        self.resample = int(getattr(processor, "resample", 2) if getattr(processor, "resample", None) is not None else 2)
        self.crop_hw = None
        if getattr(processor, "do_center_crop", False):
            crop = processor.crop_size
            self.crop_hw = (int(_size(crop, "height")), int(_size(crop, "width")))
        self.lut = self._lookup_table(processor)  # (3, 256) float32
        self._device_luts: dict[str, Any] = {}

    @classmethod
    def for_processor(cls, processor) -> "PixelPipeline | None":
        try:
            return cls(processor)
        except (ValueError, AttributeError, TypeError):
            return None

    @staticmethod
    def _lookup_table(processor) -> np.ndarray:
        """Each byte value's output per channel, from the processor's own rescale and normalize."""
        img = np.broadcast_to(np.arange(256, dtype=np.uint8), (3, 1, 256)).copy()
        out: np.ndarray = img
        if getattr(processor, "do_rescale", False):
            out = processor.rescale(out, processor.rescale_factor)
        if getattr(processor, "do_normalize", False):
            out = processor.normalize(out, processor.image_mean, processor.image_std)
        return np.ascontiguousarray(np.asarray(out, np.float32).reshape(3, 256))

    # ----------------------------------------------------------------------------- geometry

    def _target_hw(self, h: int, w: int) -> tuple[int, int] | None:
        """Size after the processor's resize (its own rounding), or None when it does not resize."""
        if not self.do_resize:
            return None
        if self.fixed_hw is not None:
            return self.fixed_hw
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = self.shortest_edge, int(self.shortest_edge * long / short)
        return (new_long, new_short) if w <= h else (new_short, new_long)

    def _resize_numpy(self, frames: np.ndarray) -> np.ndarray:
        """PIL resize of (T, H, W, 3) uint8 frames, as the processor does it (threads: PIL drops the GIL)."""
        from PIL import Image

        hw = self._target_hw(*frames.shape[1:3])
        if hw is None or hw == tuple(frames.shape[1:3]):
            return frames
        h, w = hw

        def piece(fs):
            return [np.asarray(Image.fromarray(f).resize((w, h), resample=self.resample)) for f in fs]

        return np.stack([f for part in thread_map(piece, chunks(frames, 8)) for f in part])

    def _crop(self, x, h: int, w: int):
        """Center crop of (..., H, W) (numpy or torch), zero-padded when smaller (as the processor)."""
        if self.crop_hw is None:
            return x
        ch, cw = self.crop_hw
        top, left = (h - ch) // 2, (w - cw) // 2
        if top >= 0 and left >= 0 and top + ch <= h and left + cw <= w:
            return x[..., top:top + ch, left:left + cw]
        import math

        nh, nw = max(ch, h), max(cw, w)
        tp, lp = math.ceil((nh - h) / 2), math.ceil((nw - w) / 2)
        if isinstance(x, np.ndarray):
            pad = np.zeros(x.shape[:-2] + (nh, nw), x.dtype)
        else:
            pad = x.new_zeros(x.shape[:-2] + (nh, nw))
        pad[..., tp:tp + h, lp:lp + w] = x
        top, left = top + tp, left + lp
        return pad[..., max(0, top):min(nh, top + ch), max(0, left):min(nw, left + cw)]

    def crop_video(self, video, device: str = "cpu"):
        """(T, H, W, 3) uint8 frames (numpy, or a torch tensor on any device) -> (T, 3, h, w) uint8
        on `device`, resized and cropped; pinned and copied asynchronously to a GPU."""
        import torch

        if isinstance(video, torch.Tensor):
            x = video.permute(0, 3, 1, 2)
            hw = self._target_hw(*x.shape[-2:])
            if hw is not None:
                x = resize_to(x, *hw)
            x = self._crop(x, *x.shape[-2:])
            return x.to(device, non_blocking=True).contiguous()
        frames = self._resize_numpy(np.asarray(video, np.uint8))
        x = self._crop(frames.transpose(0, 3, 1, 2), *frames.shape[1:3])
        t = torch.from_numpy(np.ascontiguousarray(x))
        if str(device).startswith("cuda"):
            return t.pin_memory().to(device, non_blocking=True)
        return t

    # ---------------------------------------------------------------------------- values

    def normalize(self, frames, dtype=None):
        """(N, 3, h, w) uint8 tensor -> pixel values on its device by one table lookup, as `dtype`
        (default float32)."""
        if frames.device.type == "cpu":
            return self._normalize_numpy(frames, dtype)
        return self._normalize_torch(frames, dtype)

    def _normalize_numpy(self, frames, dtype=None):
        """On the CPU numpy's take is several times faster than torch's gather."""
        import torch

        x = frames.numpy()
        out = np.empty(x.shape, np.float32)
        for c in range(3):
            np.take(self.lut[c], x[:, c], out=out[:, c])
        t = torch.from_numpy(out)
        return t if dtype is None or dtype == t.dtype else t.to(dtype)

    def _normalize_torch(self, frames, dtype=None, step: int = 32):
        """On a GPU: a gather from the table, `step` frames at a time to bound the index memory."""
        import torch

        dev = str(frames.device)
        lut = self._device_luts.get(dev)
        if lut is None:
            lut = self._device_luts[dev] = torch.from_numpy(self.lut).to(frames.device).view(-1)
        offsets = torch.arange(3, device=frames.device, dtype=torch.int32).view(1, 3, 1, 1) * 256
        out = torch.empty(frames.shape, dtype=dtype or torch.float32, device=frames.device)
        for i in range(0, len(frames), step):
            idx = frames[i:i + step].to(torch.int32) + offsets
            out[i:i + step] = lut.index_select(0, idx.reshape(-1)).view(idx.shape)
        return out

    def __call__(self, videos: Sequence, device: str = "cpu", dtype=None):
        """Pixel values of every frame of `videos`, concatenated in order."""
        import torch

        return self.normalize(torch.cat([self.crop_video(v, device) for v in videos]), dtype)
