"""Video LLMs as scored models: any `transformers` image-text-to-text model that takes video.

`load_model("Qwen/Qwen2-VL-7B-Instruct")`, a local `save_pretrained` folder, `vlm:<id or folder>`, or the
built-in `tiny-vlm` (`tiny-vlm:llava-onevision`, `tiny-vlm:qwen2.5-vl`, `tiny-vlm:video-llava`, `tiny-vlm:llava-next-video` for the other
tiny architectures) load through `AutoModelForImageTextToText` and the checkpoint's own tokenizer and chat
template. Frames are the
project's own (`FrameSettings`), turned into the model's video inputs by its family
(`hardneg.models.vlm.families`); the engine (`hardneg.models.vlm.engine`) runs the video and prompt
prefix once per video and every caption on its cached keys and values.

Which protocol and prompt: the benchmark's declaration (`Benchmark.vlm`), set by the scorer before
each benchmark (`use_protocol`), unless the user fixed them (`--protocol`, `--prompt`). Both, with
the prompt's version and source and the pixel settings, are part of `identity()`, so they are in
every predictions file's provenance and in every resume key.

The scorer sees this model through `ScoreAdapter` (a video's frames wait in a temporary folder, a
caption is a key), so the dual-encoder path of `hardneg.scoring` runs it unchanged.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hardneg.benchmarks.base import VLM_PROTOCOLS, VLMPrompt, check_vlm_prompt
from hardneg.models.base import hub_revision, pick_device
from hardneg.models.protocol import ScoreAdapter
from hardneg.models.registration import register
from hardneg.models.vlm.families import family_for, processor_settings, supported_model_types
from hardneg.video import frame_times

#: a prompt per protocol for a protocol asked for without a prompt (`--protocol` alone)
DEFAULT_PROMPTS: dict[str, VLMPrompt] = {
    "caption-likelihood": VLMPrompt(),
    "yes-probability": VLMPrompt(
        "yes-probability", '{video}\nDoes this video entail the description: "{caption}"?',
        "VideoCon src/prepare_data_for_inference.py, PROMPT; score as training/pipeline_video/"
        "entailment_inference.py, get_entail"),
    "choice-letter": VLMPrompt(
        "choice-letter", "{video}\nWhich caption matches the video better?\n{options}\nPlease directly give the best option:",
        "TempCompass run_video_llava.py, answer_prompt['caption_matching']"),
}
SCORE_NAMES = {
    "caption-likelihood": "mean caption log-probability (video LLM)",
    "yes-probability": "P(Yes) / (P(Yes) + P(No)) (video LLM)",
    "choice-letter": "option-letter logit (video LLM)",
    "generate-match": "generated answer matched to an option: 1 chosen, 0 not; all 0 when undecided (video LLM)",
}


#: what an undecided answer scores, per `AnswerRules.undecided`, in the words the output prints
UNDECIDED_NOTES = {
    "tie": "undecided answers score every option 0, a tie scored by the run's tie rule (hardneg's default: 0.5 of "
           "a right answer with two options under ties=expected); pass --judge to decide them",
    "wrong": "undecided answers count as wrong (0), as the protocol set's source does without its judge "
             "(lmms-eval: rating 0; TempCompass authors: --disable_llm); pass --judge to decide them",
}


def undecided_note(rule: str, judged: bool) -> str:
    """UNDECIDED_NOTES[rule], or where a judge ran (--judge), what it could not decide: never "pass --judge"."""
    note = UNDECIDED_NOTES[rule]
    if not judged:
        return note
    return note.replace("; pass --judge to decide them", "; the judge (--judge) left them undecided too")


def score_name(spec: VLMPrompt) -> str:
    """What one score of `spec` is, in words (the demo's chart axis, the results' `score`)."""
    if spec.normalize == "vilma-perplexity":
        return "minus the per-frame caption perplexity, ViLMA's normalisation (video LLM)"
    return SCORE_NAMES[spec.protocol]


def _is_video_llm_id(model: str) -> bool:
    """Whether a Hub id names a video LLM this module serves (each type's record says what its checkpoints' ids
    hold: `TinyType.hub_ids`); a folder is told by its config's model_type."""
    from hardneg.models.vlm.tiny.registry import HUB_ID_HINTS

    return any(h in model.lower() for h in HUB_ID_HINTS)


def _dtype(device: str, fp16: bool):
    import torch

    if fp16 and not device.startswith("cuda"):
        raise ValueError("--fp16 needs a GPU (--device cuda); on the CPU video LLMs run in float32")
    if device.startswith("cuda"):
        return torch.float16 if fp16 else torch.bfloat16
    return torch.float32


def _chat_template(model_id: str, tokenizer, revision: str | None) -> str:
    """The checkpoint's chat template: the tokenizer's, else chat_template.jinja / chat_template.json."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.chat_template
    import json

    from transformers.utils import cached_file

    for name in ("chat_template.jinja", "chat_template.json"):
        try:
            path = cached_file(model_id, name, revision=revision, _raise_exceptions_for_missing_entries=False)
        except Exception:
            path = None
        if path:
            text = Path(path).read_text(encoding="utf-8")
            return json.loads(text)["chat_template"] if name.endswith(".json") else text
    raise ValueError(f"model {model_id} has no chat template (tokenizer_config.json, chat_template.jinja or "
                     "chat_template.json); a video LLM needs one to place the video and the prompt")


def check_video_config(model_id: str, config, generic: bool = True) -> None:
    """A clear error naming the model type for a checkpoint that cannot take video (no video processor in
    `transformers` for its type), or, with `generic=False`, one that no hand-written family serves."""
    if family_for(config) is not None:
        return
    from hardneg.models.vlm.support import REFUSED, video_llm_types

    if config.model_type in REFUSED:
        arch = (getattr(config, "architectures", None) or [type(config).__name__])[0]
        raise ValueError(f"model {model_id} ({arch}, model_type {config.model_type!r}) is refused: "
                         f"{REFUSED[config.model_type]} (`hardneg models`, docs/models.md)")

    arch = (getattr(config, "architectures", None) or [type(config).__name__])[0]
    if config.model_type in video_llm_types() and generic:
        return
    if config.model_type in video_llm_types():
        raise ValueError(f"model {model_id} ({arch}, model_type {config.model_type!r}) has no hand-written family "
                         f"(those serve {', '.join(supported_model_types())}); use the generic path (path='auto' or "
                         "'generic'; `hardneg models` lists the paths)")
    vision = hasattr(config, "vision_config")
    what = ("an image-text model: transformers has no video processor for this model type (no video input)"
            if vision else "not a vision-language model: it has no vision tower and no video processor")
    raise ValueError(f"model {model_id} ({arch}, model_type {config.model_type!r}) is {what}; the video-LLM adapter "
                     f"scores checkpoints of model_type {', '.join(supported_model_types())}. Use a video LLM "
                     "(e.g. Qwen/Qwen2-VL-7B-Instruct, llava-hf/llava-onevision-qwen2-7b-ov-hf), or add its family "
                     "(docs/models.md, 'Add a video-LLM family')")


@register("vlm", "video LLM (Qwen2-VL, Qwen2.5-VL, LLaVA-OneVision, LLaVA-NeXT-Video, Video-LLaVA): captions scored by "
          "likelihood, yes-probability or option letter (docs/models.md)", matches=_is_video_llm_id, priority=5)
class VideoLLM(ScoreAdapter):
    """A video LLM behind the scorer; `score(frames, captions)` scores one video's captions."""

    hub_model = True
    default_model_id = None
    adapter = "video-llm"
    model_type = "generative"  # what `hardneg submit` puts on the board when no Hub card says otherwise

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, protocol: str | None = None, prompt: str | None = None,
                 caption_batch: int = 32, name: str | None = None, **options):
        """`options` (keywords, all optional): `path`: "auto" (default: the type's hand-written family if it has
        one, else the generic family), "generic" (the model's own processor, `hardneg.models.vlm.generic`) or
        "hand-written"; `seconds_per_frame`: the frames' spacing where the model reads time from it (Qwen2.5-VL);
        `judge`: a callable or `hardneg.judges.LLMJudge` for undecided generated answers (docs/models.md), also
        settable after loading (`model.judge = ...`; `hardneg.settings.ModelSpec.judge` does it). They travel as
        keywords so the constructor keeps to 10 parameters (issue 51); an unknown one is refused by name."""
        unknown = sorted(set(options) - {"path", "seconds_per_frame", "judge"})
        if unknown:
            raise TypeError(f"VideoLLM() got unexpected keyword(s) {', '.join(unknown)}: it takes model_id, device, "
                            "fp16, revision, protocol, prompt, caption_batch, name, path, seconds_per_frame, judge")
        path = options.get("path", "auto")
        seconds_per_frame = options.get("seconds_per_frame")
        from transformers import AutoConfig, AutoModelForImageTextToText, AutoTokenizer

        from hardneg.models.vlm.engine import Engine

        if not model_id:
            raise ValueError("give the video LLM's Hub id or folder, e.g. --model vlm:Qwen/Qwen2-VL-2B-Instruct "
                             "(or --model tiny-vlm)")
        from hardneg.models.vlm import placement

        placed = placement.parse(device)  # `map:auto|...`: over several devices (accelerate), else one device
        self.device = pick_device(None if placed else device)
        dt = _dtype(self.device, fp16)
        self.dtype = str(dt).replace("torch.", "")
        kw = {"revision": revision} if revision else {}
        config = AutoConfig.from_pretrained(model_id, **kw)
        if path not in ("auto", "generic", "hand-written"):
            raise ValueError(f"path {path!r}: use auto, generic or hand-written")
        check_video_config(model_id, config, generic=path != "hand-written")
        settings = processor_settings(model_id, revision)
        if seconds_per_frame is not None:  # hardneg's own setting: the frames' spacing (Qwen2.5-VL's time positions)
            settings = {**settings, "seconds_per_frame": seconds_per_frame}
        hand_written = family_for(config) if path != "generic" else None
        if path == "auto":  # which path auto runs, and why (`support.AUTO_PATH`, issue 52)
            from hardneg.models.vlm.support import auto_path

            self.path_choice = auto_path(config.model_type)
        else:
            self.path_choice = (path, "asked for (path=...)")
        if placed:
            model = self._load_placed(model_id, dt, kw, *placed)
            self.device = placement.main_device(model)
        else:
            model = AutoModelForImageTextToText.from_pretrained(model_id, dtype=dt, **kw).to(self.device).eval()
        tok = AutoTokenizer.from_pretrained(model_id, **kw)
        template = _chat_template(model_id, tok, revision)
        if hand_written is not None:
            family = hand_written(config, settings)
        else:
            from transformers import AutoProcessor

            from hardneg.models.vlm.generic import Generic
            from hardneg.models.vlm.qwen3 import Qwen3VL

            cls = Qwen3VL if config.model_type in Qwen3VL.model_types else Generic
            family = cls(config, settings, AutoProcessor.from_pretrained(model_id, **kw), tok, template)
        self.hf_model_type = config.model_type  # picks a protocol set's harness for this family (`model_harness`)
        text_cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
        video_token = getattr(family, "video_token_id", None)
        if video_token is None:
            video_token = getattr(config, "video_token_id", None) or getattr(config, "video_token_index", None)
        self.engine = Engine(model, tok, template, family, video_token, self.device, dt,
                             getattr(text_cfg, "max_position_embeddings", 32768), caption_batch)
        self.model_id = name or model_id
        self.revision = hub_revision(model_id, revision, model)
        self._template_hash = hashlib.sha256(template.encode()).hexdigest()[:12]
        self._fixed = (protocol, prompt)
        #: generate-match: a callable (question, answer, captions) -> option index or None, asked when the
        #: authors' rule cannot decide (e.g. a local LLM judge); None: undecided answers stay undecided
        self.judge = options.get("judge")
        self._item: dict | None = None
        self.generation_log: list[dict[str, Any]] = []
        self._answers: dict[tuple, str] = {}  # generated answers by (frames, question, protocol): `answer_and_match`
        self.spec = self._resolve(VLMPrompt(), protocol, prompt)
        self.score_name = score_name(self.spec)
        super().__init__(self, self._score)
        self.score_name = score_name(self.spec)

    def _load_placed(self, model_id: str, dt, kw: dict, device_map: str, max_memory: dict | None):
        """The model over the devices present (accelerate's `device_map`, capped by `max_memory`); layers that fit
        nowhere go to a temporary folder on disk, removed with this object."""
        import shutil
        import tempfile
        import weakref

        from transformers import AutoModelForImageTextToText

        try:
            import accelerate  # noqa: F401
        except ImportError:
            raise ValueError("--device-map needs accelerate: pip install 'video-hardneg[models]' (or accelerate)") from None
        offload = tempfile.mkdtemp(prefix="hardneg-offload-")
        self._offload_cleanup = weakref.finalize(self, shutil.rmtree, offload, True)
        from hardneg.models.vlm.placement import plan_device_map

        plan = plan_device_map(model_id, dt, kw, device_map, max_memory)
        model = AutoModelForImageTextToText.from_pretrained(model_id, dtype=dt, device_map=plan,
                                                            offload_folder=offload, **kw)
        self.device_map = dict(getattr(model, "hf_device_map", {}))
        return model.eval()

    # ------------------------------------------------------------------ protocol

    @staticmethod
    def _resolve(default: VLMPrompt, protocol: str | None, prompt: str | None) -> VLMPrompt:
        """The declaration's protocol and prompt, overridden by what the user fixed."""
        if protocol is None and prompt is None:
            return default
        if protocol is not None and protocol not in VLM_PROTOCOLS:
            check_vlm_prompt(protocol, "")  # the unknown-protocol error
        proto = protocol or default.protocol
        if proto == "generate-match" and default.protocol != "generate-match":
            raise ValueError("protocol 'generate-match' asks each item's own question, which this benchmark does not "
                             "declare: use --protocol-set authors (or lmms-eval) where the benchmark has one "
                             "(docs/models.md, 'Protocol sets')")
        if prompt is None:
            return default if proto == default.protocol else DEFAULT_PROMPTS[proto]
        check_vlm_prompt(proto, prompt)
        if proto == "generate-match":  # the user's wording around the item's own question, the declared matcher
            from dataclasses import replace

            return replace(default, prompt=prompt, source="given by the user (--prompt); question and matcher: "
                           + default.source, version="user")
        return VLMPrompt(proto, prompt, "given by the user (--prompt)", "user")

    def use_protocol(self, declaration=None, protocol: str | None = None, prompt=None,
                     protocol_set: str | None = None) -> VLMPrompt:
        """Score the next benchmark by its declared protocol and prompt (or the user's, when given).

        protocol_set: which of the declaration's protocol sets ("default", "authors", "lmms-eval"; `PROTOCOL_SETS`).
        prompt: one prompt for every benchmark, or {benchmark name: prompt} (`--prompt NAME=PROMPT`): a benchmark
        not named keeps its own."""
        fixed_protocol, fixed_prompt = protocol or self._fixed[0], prompt or self._fixed[1]
        if isinstance(fixed_prompt, dict):  # per benchmark ("*": the benchmarks not named)
            fixed_prompt = fixed_prompt.get(getattr(declaration, "name", None), fixed_prompt.get("*"))
        if declaration is not None and hasattr(declaration, "vlm_for"):
            default = declaration.vlm_for(protocol_set or "default")
        else:
            default = getattr(declaration, "vlm", None) or VLMPrompt()
        # the set's harness for this model family (lmms-eval's Qwen2.5-VL wrapper differs from its Qwen2-VL one)
        default = default.for_model_type(getattr(self, "hf_model_type", None))
        spec = self._resolve(default, fixed_protocol, fixed_prompt)
        if spec.protocol == "choice-letter" and getattr(declaration, "is_retrieval", False):
            raise ValueError(f"benchmark {declaration.name!r} ranks videos for each query: protocol 'choice-letter' "
                             "needs the captions of one item as options; use --protocol yes-probability or "
                             "caption-likelihood")
        self.spec = spec
        self.score_name = score_name(spec)
        fam = self.engine.family
        if hasattr(fam, "min_pixels"):  # the protocol set's pixel limits (lmms-eval's wrapper), else the checkpoint's
            if not hasattr(self, "_own_pixels"):
                self._own_pixels = (fam.min_pixels, fam.max_pixels)
            fam.min_pixels, fam.max_pixels = spec.pixels or self._own_pixels
            # a qwen-vl-utils recipe's frames reach the processor as floats (lmms-eval's wrappers): resized as floats
            fam.float_frames = getattr(spec.frames, "recipe", "hardneg").startswith("qwen-vl-utils")
        if hasattr(fam, "position_rule"):  # Qwen's rule unless the set reproduces the installed transformers'
            fam.position_rule = spec.positions or "qwen"
        self._use_dtype(spec.dtype)
        return spec

    def _use_dtype(self, dtype: str | None) -> None:
        """The protocol set's dtype (lmms-eval's Qwen2.5-VL wrapper loads in bfloat16), else the run's own.

        As `from_pretrained(dtype=...)` leaves a model: the parameters cast from the loaded ones (kept, so that a
        later set gets them back unrounded), the rotary `inv_freq` buffers left in float32 (`module.to(dtype)`
        would round those too, and move every position's angle)."""
        torch = self.engine.torch
        if not hasattr(self, "_own_dtype"):
            self._own_dtype = self.engine.dtype
        want = getattr(torch, dtype) if dtype else self._own_dtype
        if want == self.engine.dtype:
            return
        params = list(self.engine.model.parameters())
        if not hasattr(self, "_own_params"):
            self._own_params = [p.data for p in params]
        for p, own in zip(params, self._own_params):
            p.data = own if want == self._own_dtype else own.to(want)
        self.engine.dtype = want
        self.dtype = str(want).replace("torch.", "")

    def identity(self) -> dict[str, Any]:
        judge = None if self.judge is None else (self.judge.identity() if hasattr(self.judge, "identity")
                                                  else getattr(self.judge, "__qualname__", "given"))
        extra = {"item_text": self.spec.item_text, "matcher": self.spec.matcher,
                 "max_new_tokens": self.spec.max_new_tokens, "answers": self.spec.answers.identity(),
                 "judge": judge} if self.spec.protocol == "generate-match" else {}
        if self.spec.protocol == "generate-match" and self.spec.temperature:  # sampled: its settings and seed
            extra.update(decoding=self.spec.decoding(), temperature=self.spec.temperature, top_k=self.spec.top_k,
                         seed=self.spec.seed)
        if self.spec.dtype is not None:
            extra["protocol_dtype"] = self.spec.dtype
        if self.spec.positions is not None:
            extra["positions"] = self.spec.positions
        if self.spec.system is not None:
            extra["system"] = self.spec.system
        return {**super().identity(), "protocol": self.spec.protocol, "score": score_name(self.spec),
                **({"normalize": self.spec.normalize} if self.spec.normalize != "mean" else {}),
                "prompt": self.spec.prompt, **extra,
                "prompt_version": self.spec.version, "prompt_source": self.spec.source,
                "chat_template": self._template_hash, "pixels": self.engine.family.identity(),
                "model_type": self.model_type}

    # ------------------------------------------------------------------ scoring

    @property
    def wants_items(self) -> bool:
        """True when the protocol takes its prompt from the item (the scorer then calls `set_item` first)."""
        return self.spec.item_text is not None

    def set_item(self, item: dict[str, Any]) -> None:
        """The next item's {"captions", "provenance"} (never its label), for a protocol that asks the item's own
        question (`VLMPrompt.item_text`)."""
        self._item = item

    def _score(self, video, captions: Sequence[str]) -> np.ndarray:
        # the decoder's sampled frame times (hardneg.video.Frames.times) place the frames in time (Qwen2.5-VL)
        if self.spec.protocol == "generate-match":
            return self.answer_and_match(video, captions, timestamps=frame_times(video))
        return self.engine.score(video, list(captions), self.spec, timestamps=frame_times(video))

    def answer_and_match(self, video, captions: Sequence[str], timestamps=None, naive: bool = False) -> np.ndarray:
        """generate-match: the item's question, the model's greedy answer, the declared matcher (then the judge,
        if any). Scores: 1 for the chosen option, 0 for the others; all 0 (a tie) when nothing decides, and the
        answer is logged in `generation_log` as undecided (never counted as a choice)."""
        captions = list(captions)
        if not captions:
            raise ValueError("an item with no captions cannot be scored: every item needs at least one caption")
        item = self._item
        if item is None or list(item.get("captions") or []) != captions:
            raise ValueError("protocol 'generate-match' needs the item (set_item) before its captions are scored; "
                             "score it through hardneg run / score_benchmark, which pass each item")
        question = self.spec.function("item_text")(item)
        # one generation per (frames, question, protocol): a question in several configs (TempCompass's `all` and its
        # aspect) is answered once per run
        arr = np.ascontiguousarray(np.asarray(video))
        key = (hashlib.blake2b(arr.tobytes(), digest_size=16).hexdigest(), arr.shape, question, self.spec.prompt,
               self.spec.system, self.spec.max_new_tokens, self.spec.dtype, self.spec.positions,
               self.spec.temperature, self.spec.top_k, self.spec.seed,
               None if timestamps is None else tuple(np.asarray(timestamps, np.float64).reshape(-1).tolist()), naive)
        raw = self._answers.get(key)
        if raw is None:
            raw = self.engine.generate(video, self.spec, question, timestamps=timestamps, naive=naive)
            if len(self._answers) > 100_000:  # bounded memory on huge runs
                self._answers.clear()
            self._answers[key] = raw
        answer = self.spec.answers.clean(raw)  # the protocol set's cut / strip
        choice = self.spec.function("matcher")(answer, item)
        by = "rule" if choice is not None else None
        if choice is None and self.judge is not None:
            choice = (self.judge(question, answer, captions, spec=self.spec) if hasattr(self.judge, "identity")
                      else self.judge(question, answer, captions))
            by = "judge" if choice is not None else None
        self.generation_log.append({"question": question, "answer": answer, "choice": choice, "decided_by": by})
        out = np.zeros(len(captions), np.float64)
        if choice is not None:
            out[int(choice)] = 1.0
        return out

    def take_generation_report(self) -> dict[str, Any] | None:
        """What generate-match did since the last call: answers, decided by rule / judge, and every undecided
        question with its answer (then the log is cleared); None when nothing was generated."""
        log, self.generation_log = self.generation_log, []
        if not log:
            return None
        undecided = [{"question": e["question"], "answer": e["answer"]} for e in log if e["decided_by"] is None]
        return {"answers": len(log), "by_rule": sum(e["decided_by"] == "rule" for e in log),
                "by_judge": sum(e["decided_by"] == "judge" for e in log), "undecided": len(undecided),
                "undecided_items": undecided, "undecided_rule": self.spec.answers.undecided,
                "note": undecided_note(self.spec.answers.undecided, self.judge is not None)}

    def similarity_many(self, video_embeddings: Sequence[np.ndarray], text_embeddings: Sequence[np.ndarray]
                        ) -> list[np.ndarray]:
        """Scores of many items at once (video key i with its caption keys i): items batched across videos
        (`hardneg.models.vlm.batch`), in pieces of a few prefill batches so that frames in memory stay bounded.
        The scorer calls this for a batch of items; the scores equal one item at a time (tests/vlm/test_vlm_batch.py)."""
        from hardneg.models.vlm.batch import MAX_ITEMS, BatchScorer

        if self.spec.normalize == "vilma-perplexity":  # every frame scored alone (`Engine.score`): one item at a time
            return [super(VideoLLM, self).similarity(np.asarray(v, np.float64).reshape(1, -1), t)[0]
                    for v, t in zip(video_embeddings, text_embeddings)]
        pairs = [(int(np.asarray(v, np.float64).reshape(-1)[0]),
                  [self._texts[int(k)] for k in np.asarray(t, np.float64)[:, 0]])
                 for v, t in zip(video_embeddings, text_embeddings)]
        scorer = BatchScorer(self.engine)
        out: list[np.ndarray] = []
        for i in range(0, len(pairs), 4 * MAX_ITEMS):
            piece = pairs[i:i + 4 * MAX_ITEMS]
            load = getattr(self, "_load", None)  # the frames as the decoder gave them (with their times, if kept)
            frames = [load(key) if load else np.load(self._frames / f"{key}.npy") for key, _ in piece]
            items = [(f, caps, getattr(f, "times", None)) for f, (_, caps) in zip(frames, piece)]
            out += [np.asarray(g, np.float32) for g in scorer.score_items(items, self.spec)]
        return out

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        """(V, T): every video with every caption; several videos go through the cross-video batch."""
        vids = np.asarray(video_embeddings, np.float64)
        if len(vids) < 2 or getattr(self, "wants_items", False):  # one video, or a protocol that reads each item
            return super().similarity(video_embeddings, text_embeddings)
        got = self.similarity_many(list(vids), [text_embeddings] * len(vids))
        return np.stack(got).reshape(len(vids), len(text_embeddings))

    def video_refusal(self, frames) -> str | None:
        """Why this model cannot take a decoded video, said before anything is scored (the scorer then counts it as
        too long: `VideoReport.too_long`): its tokens alone (the processor's expansion of the frames, before any
        text) exceed the model's context. None when it fits. The count depends on the frames' shape only, so it is
        computed once per shape (a ViLMA-perplexity protocol scores one frame at a time: one frame is checked)."""
        arr = np.asarray(frames)
        if self.spec.normalize == "vilma-perplexity":
            arr = arr[:1]
        times = frame_times(frames)
        memo = self.__dict__.setdefault("_video_tokens", {})
        if arr.shape not in memo:
            video = self.engine.family.video_inputs(arr, self.engine.dtype, self.engine.device,
                                                    timestamps=None if times is None else list(times)[:len(arr)])
            memo[arr.shape] = len(video.expansion) if video.expansion is not None else int(video.n_tokens)
        n, context = memo[arr.shape], self.engine.max_context
        if n < context:
            return None
        t, h, w = arr.shape[:3]
        return (f"{t} frames of {w}x{h} make {n:,} video tokens, more than the model's context of {context:,} tokens "
                f"before any text; use smaller frames (--resize) or fewer (--frames)")

    def score(self, video, captions: Sequence[str], naive: bool = False, full_batch: bool = False,
              timestamps: Sequence[float] | None = None) -> np.ndarray:
        """(len(captions),) scores of the captions for one video's frames ((T, H, W, 3) uint8); `naive` /
        `full_batch`: the reference paths (one forward per caption / all full sequences in one batch);
        `timestamps`: the frames' times in seconds (Qwen2.5-VL spaces its temporal positions by them); by default
        those a `hardneg.video.Frames` array carries (`decode_frames` sets them)."""
        times = timestamps if timestamps is not None else frame_times(video)
        if self.spec.protocol == "generate-match":  # the item comes from set_item
            return self.answer_and_match(video, captions, timestamps=times, naive=naive)
        return self.engine.score(video, list(captions), self.spec, naive=naive, full_batch=full_batch,
                                 timestamps=times)


@register("tiny-vlm", "built-in tiny random-weight video LLM (Qwen2-VL; tiny-vlm:llava-onevision, tiny-vlm:qwen2.5-vl, "
          "tiny-vlm:video-llava, tiny-vlm:llava-next-video), offline tests and demo")
class TinyVideoLLM(VideoLLM):
    hub_model = False
    license = "apache-2.0"  # random weights made here: the project's license

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, **kw):
        from hardneg.models.vlm.tiny import ARCHITECTURES, DEFAULT, cli_name, tiny_vlm_path

        arch = model_id or DEFAULT
        if arch not in ARCHITECTURES:
            raise ValueError(f"tiny-vlm:{arch}: the tiny video LLMs are {', '.join('tiny-vlm:' + a for a in ARCHITECTURES)}")
        name = "hardneg/" + cli_name(arch).replace(":", "-")
        super().__init__(str(tiny_vlm_path(arch)), device=device, fp16=fp16, name=name, **kw)


__all__ = ["DEFAULT_PROMPTS", "SCORE_NAMES", "TinyVideoLLM", "VideoLLM", "check_video_config"]
