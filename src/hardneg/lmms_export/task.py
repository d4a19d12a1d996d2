"""What an exported lmms-eval task's `utils.py` calls: hardneg's items, prompt, matcher and results engine.

Each exported task folder holds `hardneg_task.json` (`TaskSpec`); its `utils.py` binds the functions below to it.
lmms-eval runs the model; this module builds the request from the benchmark's declared protocol and scores the
answers with hardneg's own metrics (tie rules, intervals): `process_results` returns each item's score row and
`aggregate` hands every row to `hardneg.results.evaluate_scores` once. Never imported by hardneg's own scoring.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: the lmms-eval output type of each exported protocol
OUTPUT_TYPES = {"generate-match": "generate_until", "caption-likelihood": "multiple_choice"}
SPEC_FILE = "hardneg_task.json"


@dataclass(frozen=True)
class TaskSpec:
    """One exported task: the benchmark, its built dataset (folder or Hub id), config and split, the videos folder,
    the protocol set and protocol, and the results engine's settings (tie rule, resamples, seed)."""

    task: str
    benchmark: str
    dataset: str
    config: str
    split: str
    videos: str
    protocol_set: str
    protocol: str
    ties: str = "expected"
    n_resamples: int = 1000
    seed: int = 0

    @classmethod
    def read(cls, folder: str | Path) -> "TaskSpec":
        return cls(**json.loads((Path(folder) / SPEC_FILE).read_text()))

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=1, sort_keys=True)


def likelihood_prompt(declaration) -> str:
    """The caption-likelihood prompt of a benchmark: its declared default when that is caption likelihood, else
    hardneg's default one (`VLMPrompt()`)."""
    from hardneg.benchmarks.base import VLMPrompt

    vlm = declaration.vlm_for("default")
    return (vlm if vlm.protocol == "caption-likelihood" else VLMPrompt()).prompt


def loglikelihood_value(response) -> float:
    """The log-likelihood of one `loglikelihood` response as a task's process_results receives it: lmms-eval 0.7.3
    turns a model's (loglikelihood, is_greedy) tuple into its `str()` (api/instance.py, `unwrap_generation_output`),
    which `repr` writes exactly, so it is read back with `ast.literal_eval`; a tuple or a number is taken as is."""
    import ast

    if isinstance(response, str):
        try:
            response = ast.literal_eval(response.strip())
        except (ValueError, SyntaxError) as exc:
            raise ValueError(f"a loglikelihood response {response[:80]!r} is neither a number nor a "
                             "(loglikelihood, is_greedy) pair") from exc
    return float(response[0] if isinstance(response, (list, tuple)) else response)


class BoundTask:
    """The functions lmms-eval's YAML names (`!function utils.<name>`), bound to one `TaskSpec`."""

    def __init__(self, folder: str | Path):
        from hardneg import benchmarks

        self.spec = TaskSpec.read(folder)
        self.declaration = benchmarks.get(self.spec.benchmark)
        self.vlm = self.declaration.vlm_for(self.spec.protocol_set)
        if self.spec.protocol == "generate-match" and self.vlm.protocol != "generate-match":
            raise ValueError(f"{self.spec.task}: protocol set {self.spec.protocol_set!r} of {self.spec.benchmark} "
                             "declares no generate-match protocol; export again")
        self._videos = None
        self._items = None

    # ------------------------------------------------------------------ requests
    def _item(self, doc: dict) -> dict[str, Any]:
        return {"captions": list(doc["captions"]), "provenance": doc.get("provenance")}

    def doc_to_visual(self, doc: dict) -> list[str]:
        from hardneg.video import VideoFolder

        if self._videos is None:
            self._videos = VideoFolder(self.spec.videos)
        path = self._videos.path(str(doc["video_id"]))
        if path is None:
            raise FileNotFoundError(f"{self.spec.task}: no video {doc['video_id']!r} in {self.spec.videos}; export "
                                    "again with --videos naming the folder of <video_id>.mp4 files")
        return [str(path)]

    def doc_to_text(self, doc: dict, lmms_eval_specific_kwargs=None) -> str:
        """generate-match: the declared prompt around the item's own question, the video placed by lmms-eval's model
        (the `{video}` slot dropped). caption-likelihood: the declared prompt before the caption."""
        if self.spec.protocol == "generate-match":
            question = self.vlm.function("item_text")(self._item(doc))
            return self.vlm.prompt.replace("{video}", "").replace("{question}", question)
        return likelihood_prompt(self.declaration).split("{caption}")[0].replace("{video}", "").strip()

    def doc_to_choice(self, doc: dict) -> list[str]:
        return list(doc["captions"])

    def doc_to_target(self, doc: dict):
        """The label (lmms-eval logs it; scoring never reads it here: `aggregate` reads the built items)."""
        return int(doc["label"])

    # ------------------------------------------------------------------ scores
    def process_results(self, doc: dict, results: list) -> dict[str, dict]:
        """One score row per item: generate-match 1 for the matched option and 0 for the others (all 0: undecided,
        scored by the protocol set's rule in `aggregate`); caption likelihood: lmms-eval's log-likelihood per caption
        (its sum over the caption's tokens)."""
        captions = list(doc["captions"])
        if self.spec.protocol == "generate-match":
            raw = results[0][0] if isinstance(results[0], list) else results[0]
            answer = self.vlm.answers.clean(str(raw))
            choice = self.vlm.function("matcher")(answer, self._item(doc))
            row = np.zeros(len(captions))
            if choice is not None:
                row[int(choice)] = 1.0
            value = {"id": str(doc["id"]), "scores": row.tolist(), "answer": answer,
                     "decided": choice is not None}
        else:
            value = {"id": str(doc["id"]), "scores": [loglikelihood_value(r) for r in results]}
        return {self.metric_name(): value}

    def metric_name(self) -> str:
        return f"hardneg_{self.declaration.headline_for(self.spec.config)[0]}"

    def result(self, values: list[dict]):
        """hardneg's Result for the rows lmms-eval collected (`hardneg.results.evaluate_scores`, once)."""
        from hardneg.items import align_predictions, item_set, load_benchmark
        from hardneg.results import evaluate_aligned

        if self._items is None:
            data = load_benchmark(self.spec.dataset, self.spec.config, [self.spec.split], self.spec.benchmark)
            self._items = item_set(data)
        rows = [v["scores"] for v in values]
        ties = self.spec.ties
        if self.spec.protocol == "generate-match" and self.vlm.answers.undecided == "wrong":
            # the protocol set's source scores an undecided answer (an all-0 row) 0: the pessimistic tie rule, as
            # `hardneg evaluate` does (hardneg.evaluation.evaluate_predictions)
            ties = "pessimistic"
        aligned = align_predictions(self._items, [v["id"] for v in values], rows)
        return evaluate_aligned(aligned, declaration=self.declaration, ties=ties,
                                n_resamples=self.spec.n_resamples, seed=self.spec.seed)

    def aggregate(self, values: list[dict]) -> float:
        """The first headline metric on this config, in percent for a fraction (as lmms-eval tasks report)."""
        from hardneg import vocabulary

        res = self.result(values)
        key = self.declaration.headline_for(self.spec.config)[0]
        value = res.metrics[key]["value"]
        return 100.0 * value if vocabulary.entry(key).percent else value
