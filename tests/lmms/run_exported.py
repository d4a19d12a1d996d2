"""Run tasks written by `hardneg export lmms-eval` through lmms-eval 0.7.3's Python API (`simple_evaluate`), offline,
with its Qwen2-VL wrapper. Usage: python run_exported.py CONFIG.json OUT.json; CONFIG: {"hf_home", "tasks_dir",
"tasks", "pretrained"}. Writes lmms-eval's results and each sample's logged hardneg value (id, answer, decided)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(config_path: str, out_path: str) -> None:
    cfg = json.loads(Path(config_path).read_text())
    os.environ["HF_HOME"] = cfg["hf_home"]
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from hardneg.lmms_eval_compat import install_shims

    install_shims()
    import torch

    torch.set_num_threads(1)
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.tasks import TaskManager

    tm = TaskManager(include_path=cfg["tasks_dir"], include_defaults=False)
    results = simple_evaluate(model="qwen2_vl", model_args=f"pretrained={cfg['pretrained']},device_map=cpu",
                              tasks=cfg["tasks"], task_manager=tm, batch_size=1, log_samples=True, device="cpu",
                              bootstrap_iters=0, verbosity="WARNING", process_docs_parallel=1)
    samples = {task: [next(v for k, v in row.items() if k.startswith("hardneg_") and isinstance(v, dict))
                      for row in rows] for task, rows in results["samples"].items()}
    out = {"samples": samples, "results": {t: {k: v for k, v in r.items() if isinstance(v, (int, float, str))}
                                           for t, r in results["results"].items()}}
    Path(out_path).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:3])
