"""Run lmms-eval 0.7.3 itself (its Python API, offline) on local copies of released items; write what it did.

Usage: python run_lmms_eval.py CONFIG.json OUT.json. CONFIG: {"hf_home", "tasks_dir", "tasks": [...], "pretrained",
"model": "qwen2_vl" | "qwen2_5_vl", "crafted": null | [raw answer text per document]}. Run in its own process (lmms-eval reads
$HF_HOME when its task modules import, and sets up loguru and accelerate).

The wrapper is the one `simple_evaluate(model=...)` resolves: for "qwen2_vl" the simple `Qwen2_VL`; for "qwen2_5_vl"
the chat `Qwen2_5_VL` (models/chat/qwen2_5_vl.py, the class lmms-eval's registry prefers), whose `__init__` is the
simple class's (models/simple/qwen2_5_vl.py). What it records per document, from lmms-eval's own objects: the task's
prompt (`arguments[0]`), the chat text the wrapper rendered (`processor.apply_chat_template`), the frames qwen-vl-utils gave the wrapper (saved as
uint8 .npy after the wrapper's own frame subsampling), the processor's `video_grid_thw` and a digest of its
`pixel_values_videos`, its `second_per_grid_ts`, the 3-D positions the installed transformers gives the prompt
(the model's own `get_rope_index` on the inputs `generate` received), the model's dtype, the generation settings, the wrapper's answer (`resps`), the task's rating, and whether its
rule sent the answer to the judge (`get_eval_result`, replaced by a marker that rates 0, as it does without an API).
With `crafted`, the model's `generate` returns the tokens of the given raw text instead of running the network: the
wrapper's own decoding, cut and strip then run on known text.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path


def main(config_path: str, out_path: str) -> None:
    cfg = json.loads(Path(config_path).read_text())
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    os.environ["HF_HOME"] = cfg["hf_home"]
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from hardneg.lmms_eval_compat import install_shims

    shims = install_shims()
    import numpy as np
    import torch

    torch.set_num_threads(1)
    from lmms_eval.evaluator import simple_evaluate
    import importlib

    wrapper_module = importlib.import_module(f"lmms_eval.models.simple.{cfg['model']}")
    wrapper_class = {"qwen2_vl": "Qwen2_VL", "qwen2_5_vl": "Qwen2_5_VL"}[cfg["model"]]
    from lmms_eval.tasks import TaskManager

    record: dict = {"renders": [], "videos": [], "generate": []}
    real_init = getattr(wrapper_module, wrapper_class).__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        record["wrapper"] = f"{type(self).__module__}.{type(self).__qualname__}"
        proc = self.processor
        real_apply, real_call = proc.apply_chat_template, proc.__call__

        def apply(msg, *aa, **kk):
            text = real_apply(msg, *aa, **kk)
            if msg and isinstance(msg[0], list):  # a batch of one conversation (the chat wrapper)
                assert len(msg) == 1 and len(text) == 1
                msg, text = msg[0], text[0]
            video = [c.get("video") for m in msg if isinstance(m.get("content"), list) for c in m["content"]
                     if c.get("type") == "video"]
            record["renders"].append(text)
            record.setdefault("render_videos", []).append(video[0] if video else None)
            return text

        class Recorder(type(proc)):
            def __call__(self_, *aa, **kk):
                out = real_call(*aa, **kk)
                vids = kk.get("videos")
                frames = None if not vids else vids[0]
                n = len(record["videos"])
                if frames is not None:
                    arr = frames.detach().cpu().numpy()
                    assert np.allclose(arr, np.round(arr)) and arr.min() >= 0 and arr.max() <= 255
                    path = Path(out_path).with_name(f"frames-{n}.npy")
                    np.save(path, arr.round().astype(np.uint8).transpose(0, 2, 3, 1))  # (T, H, W, 3)
                pv = out["pixel_values_videos"].detach().float().cpu().numpy()
                np.save(Path(out_path).with_name(f"pixels-{n}.npy"), pv)
                record["videos"].append({
                    "frames": None if frames is None else str(Path(out_path).with_name(f"frames-{n}.npy")),
                    "pixels": str(Path(out_path).with_name(f"pixels-{n}.npy")),
                    "grid": out["video_grid_thw"].tolist(), "pixels_sha": hashlib.sha256(pv.tobytes()).hexdigest(),
                    "pixels_shape": list(pv.shape), "input_ids": out["input_ids"][0].tolist(),
                    "second_per_grid_ts": None if out.get("second_per_grid_ts") is None
                    else [float(x) for x in out["second_per_grid_ts"]]})
                return out

        proc.__class__ = Recorder
        proc.apply_chat_template = apply
        model = self._model
        real_generate = model.generate
        crafted = cfg.get("crafted")

        def generate(**kw):
            text = None if crafted is None else crafted[len(record["generate"])]
            rope = {k: kw[k] for k in ("mm_token_type_ids", "video_grid_thw", "second_per_grid_ts", "attention_mask")
                    if kw.get(k) is not None}
            positions, _ = model.model.get_rope_index(kw["input_ids"], **rope)  # the installed transformers' rule
            pos_path = Path(out_path).with_name(f"positions-{len(record['generate'])}.npy")
            np.save(pos_path, positions[:, 0].cpu().numpy())
            record["generate"].append({"max_new_tokens": kw.get("max_new_tokens"), "do_sample": kw.get("do_sample"),
                                       "dtype": str(model.dtype), "raw": text, "positions": str(pos_path)})
            if crafted is None:
                return real_generate(**kw)
            ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
            return torch.cat([kw["input_ids"], torch.tensor([ids], dtype=kw["input_ids"].dtype)], dim=1)

        model.generate = generate

    setattr(getattr(wrapper_module, wrapper_class), "__init__", init)

    tm = TaskManager(include_path=cfg["tasks_dir"], include_defaults=False)
    # the judge: lmms-eval's get_eval_result posts to the OpenAI API and, when that fails 10 times, rates 0. Offline,
    # the post fails at once and the retries' sleeps are skipped: the rating is lmms-eval's own 0
    import requests
    import time

    def no_network(*_a, **_k):
        raise requests.ConnectionError("offline (hardneg parity test)")

    requests.post = no_network
    time.sleep = lambda *_a, **_k: None
    results = simple_evaluate(
        model=cfg["model"], model_args=",".join(f"{k}={v}" for k, v in {
            "pretrained": cfg["pretrained"], "device_map": "cpu", **cfg.get("model_args", {})}.items()),
        tasks=cfg["tasks"], task_manager=tm, batch_size=1, log_samples=True, device="cpu", bootstrap_iters=0,
        verbosity="WARNING", process_docs_parallel=1)
    samples = {}
    for task, rows in results["samples"].items():
        samples[task] = []
        for row in rows:
            metric = next(v for k, v in row.items() if k.endswith("accuracy") and isinstance(v, dict))
            answer = row["resps"][0][0] if isinstance(row["resps"][0], list) else row["resps"][0]
            answer = getattr(answer, "text", answer)  # the chat wrapper returns GenerationResult
            samples[task].append({"doc_id": row["doc_id"], "prompt": row["arguments"][0] if isinstance(
                row["arguments"][0], str) else row["arguments"][0][0], "answer": answer, "rating": metric["rating"],
                "match_success": metric["match_success"], "judge": metric.get("chatgpt_response"),
                "video": Path(row["doc"].get("video_name") or row["doc"].get("video_id") + ".mp4").name})
    out = {"shims": shims, "wrapper": record.get("wrapper"), "samples": samples, "record": record,
           "results": {t: {k: v for k, v in r.items() if isinstance(v, (int, float, str))}
                       for t, r in results["results"].items()}}
    Path(out_path).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:3])
