"""`hardneg_vlm`: an lmms-eval 0.7.3 model that runs hardneg's own video-LLM engine on the exported tasks.

lmms-eval's video wrappers cannot run a `multiple_choice` (loglikelihood) task on a video (its Qwen wrappers raise
NotImplementedError); this model can, and its numbers are `hardneg run`'s. It is registered through lmms-eval's own
extension mechanism: the `lmms_eval.models` entry-point group (lmms_eval/models/registry_v2.py,
`ModelRegistryV2.load_entrypoint_manifests`; pyproject.toml declares `hardneg_vlm = "hardneg.lmms_export.entry:
manifest"`), so after `pip install -e '.[lmms-eval]'`:

    lmms-eval --model hardneg_vlm --model_args pretrained=tiny-vlm,device=cpu --include_path DIR --tasks ...

model_args: `pretrained` (any name `hardneg run --model` takes: `tiny-vlm:<arch>`, a Hub id, a folder), `device`,
`fp16`, `revision`, and the frames (`n_frames`, `fps`, `resize`; default: the protocol set's own frames, else
hardneg's, as `hardneg run` chooses them). It serves only the tasks `hardneg export lmms-eval` writes: each request
carries the task's `doc_to_visual`, bound to the exported task (`hardneg.lmms_export.task.BoundTask`), which names
the benchmark, protocol set and protocol. Per document it decodes the video once with hardneg's decoder, takes the
protocol as `hardneg run` does (`bind_protocol`), and

* generate_until: returns the engine's raw greedy answer to the item's question (the task's `process_results` then
  cuts, strips and matches it by the declared rule, as `hardneg run` does);
* loglikelihood: returns each caption's hardneg caption-likelihood score (the mean log-probability per caption
  token, one video prefill shared by the captions: the cached engine), as the loglikelihood lmms-eval passes on,
  so the task's aggregate equals `hardneg run --protocol caption-likelihood`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

def bound_task(doc_to_visual):
    """The exported task (`BoundTask`) behind a request's `doc_to_visual` (lmms-eval passes its task's method, whose
    config holds the function utils.py bound), or None for a task `hardneg export` did not write."""
    from hardneg.lmms_export.task import BoundTask

    fn = doc_to_visual
    for _ in range(3):
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, BoundTask):
            return owner
        fn = getattr(getattr(owner, "config", None), "doc_to_visual", None)
        if fn is None:
            return None
    return None


def _flag(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes")


def _lmms_base():
    from lmms_eval.api.model import lmms

    return lmms


class HardnegVLM(_lmms_base()):
    """lmms-eval's `lmms` interface over `hardneg.models.load_model(pretrained)` (a video LLM)."""

    is_simple = True

    def __init__(self, pretrained: str = "tiny-vlm", device: str | None = "cpu", fp16: Any = False,
                 revision: str | None = None, n_frames: Any = None, fps: Any = None, resize: Any = None,
                 batch_size: Any = 1, **ignored: Any) -> None:
        super().__init__()
        from hardneg.models import load_model

        self.model = load_model(str(pretrained), device=device, fp16=_flag(fp16), revision=revision)
        if not hasattr(self.model, "use_protocol"):
            raise ValueError(f"hardneg_vlm: {pretrained!r} is not a video LLM (it scores one way only); name a "
                             "video LLM, e.g. pretrained=tiny-vlm")
        self.frame_args = {k: v for k, v in (("n_frames", n_frames), ("fps", fps), ("resize", resize))
                           if v is not None}
        self.batch_size_per_gpu = int(batch_size)
        self._frames: dict[tuple, np.ndarray] = {}
        self._scores: dict[tuple, np.ndarray] = {}

    # ------------------------------------------------------------------ the protocol and the frames
    def _task(self, request):
        args = request.args
        bound = bound_task(args[2])
        if bound is None:
            raise ValueError(f"hardneg_vlm runs the tasks `hardneg export lmms-eval` writes; task {args[-2]!r} is not "
                             "one (its doc_to_visual is not an exported hardneg task's)")
        return bound, self.task_dict[args[-2]][args[-1]][args[-3]]

    def _bind(self, bound) -> None:
        from hardneg.models.prompting import bind_protocol

        likelihood = bound.spec.protocol == "caption-likelihood"
        bind_protocol(self.model, bound.declaration, "caption-likelihood" if likelihood else None, None,
                      bound.spec.protocol_set)

    def _settings(self):
        """The frames `hardneg run` takes: the given ones, else the protocol set's own, else hardneg's default."""
        from dataclasses import replace

        from hardneg.video import FrameSettings

        own = getattr(getattr(self.model, "spec", None), "frames", None)
        if not self.frame_args:
            return own if own is not None else FrameSettings()
        typed = {k: (float(v) if k == "fps" else int(v)) for k, v in self.frame_args.items()}
        return replace(FrameSettings(), **typed)

    def _video(self, bound, doc) -> np.ndarray:
        from hardneg.video import decode_frames

        path = bound.doc_to_visual(doc)[0]
        settings = self._settings()
        key = (path, settings)
        if key not in self._frames:
            if len(self._frames) > 64:  # bounded memory: the requests of one document come together
                self._frames.clear()
            self._frames[key] = decode_frames(path, settings)
        return self._frames[key]

    # ------------------------------------------------------------------ lmms-eval's interface
    def generate_until(self, requests) -> list[str]:
        from hardneg.video import frame_times

        out = []
        for request in requests:
            bound, doc = self._task(request)
            self._bind(bound)
            frames = self._video(bound, doc)
            question = self.model.spec.function("item_text")(bound._item(doc))
            out.append(self.model.engine.generate(frames, self.model.spec, question, timestamps=frame_times(frames)))
        return out

    def loglikelihood(self, requests) -> list[tuple[float, bool]]:
        out = []
        for request in requests:
            bound, doc = self._task(request)
            captions = [str(c) for c in doc["captions"]]
            continuation = request.args[1]
            if continuation not in captions:
                raise ValueError(f"hardneg_vlm: the continuation {continuation!r} is none of the document's captions; "
                                 "export the task again (`hardneg export lmms-eval`)")
            key = (bound.spec.task, str(doc["id"]))
            if key not in self._scores:
                self._bind(bound)
                frames = self._video(bound, doc)
                self._scores[key] = np.asarray(self.model.score(frames, captions), np.float64)
            out.append((float(self._scores[key][captions.index(continuation)]), False))
        return out

    def generate_until_multi_round(self, requests) -> list[str]:
        raise NotImplementedError("hardneg_vlm answers one round (the exported tasks ask one question)")
