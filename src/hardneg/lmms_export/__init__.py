"""`hardneg export lmms-eval DIR`: our benchmarks as lmms-eval 0.7.3 tasks (`lmms-eval --include_path DIR`).

`write` (hardneg.lmms_export.writer) writes one folder per task: a YAML that lmms-eval's task loader reads, a
`utils.py` that imports hardneg (`hardneg.lmms_export.task`) and a `hardneg_task.json` saying which built dataset,
config, videos and protocol the task uses. The prompt, the answer's cut/strip and matcher come from the benchmark's
declaration (`Benchmark.vlm_for`), and scores come from the one results engine (`hardneg.results.evaluate_scores`):
lmms-eval only runs the model.
"""

from hardneg.lmms_export.writer import ExportedTask, plan, write

__all__ = ["ExportedTask", "plan", "write"]
