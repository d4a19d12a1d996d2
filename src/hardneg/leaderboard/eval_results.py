"""Export a model's recomputed results in the Hub's `.eval_results/` YAML format.

The Hub reads `.eval_results/<name>.yaml` from a model repo: a list of entries, each
with `dataset` (`id`, `task_id`), `value`, `date`, `source` (`url`, `name`) and
optional `notes`. One file per benchmark; one entry per metric and part, from the
newest visible version on the board, with the interval and revisions in `notes`.
"""

from __future__ import annotations

import yaml

from hardneg.leaderboard.drawing import Placeholder, validate_stored_results
from hardneg import benchmarks, vocabulary
from hardneg.leaderboard.store import Store

DEFAULT_SPACE_URL = "https://huggingface.co/spaces/video-hardneg/leaderboard"



#: where a result of a board in local mode comes from: no public page holds it
LOCAL_SOURCE = "a local video-hardneg board (hardneg leaderboard serve / submit --space DIR; not published), " \
    "recomputed from predictions"


def source_of(sub, space_url: str) -> dict[str, str]:
    """The entry's `source`: the Space that holds the result, or, for a local board's result, only its name (a
    local result does not claim the public Space)."""
    if getattr(sub, "local", False):
        return {"name": LOCAL_SOURCE}
    return {"url": space_url, "name": "video-hardneg leaderboard (recomputed from predictions)"}


def space_url_from_env() -> str:
    """The running Space's own page (`SPACE_ID` is set on the Hub), else the public board's."""
    import os

    space = os.environ.get("SPACE_ID", "").strip()
    return f"https://huggingface.co/spaces/{space}" if space else DEFAULT_SPACE_URL


def eval_results_files(store: Store, model_id: str, space_url: str = DEFAULT_SPACE_URL) -> dict[str, str]:
    """{'.eval_results/hardneg-<benchmark>.yaml': YAML text} for every benchmark the model is on."""
    current = sorted((s for s in store.current() if s.model_id == model_id),
                     key=lambda s: (s.benchmark, s.config, s.split))
    if not current:
        raise ValueError(f"model {model_id!r} has no visible results on the board; submit predictions first")
    files: dict[str, list] = {}
    for sub in current:
        if sub.benchmark not in benchmarks.names():  # a stored row of a benchmark this version does not declare
            continue
        metrics = validate_stored_results(sub)
        if isinstance(metrics, Placeholder):  # damaged stored results (N1): nothing to export for this part
            continue
        for metric, m in sorted(metrics.items()):
            if m.get("estimate") is None:
                continue
            # a machine output: fractions as fractions, ranks as ranks (`hardneg.vocabulary`); the unit is in notes
            unit = vocabulary.unit(metric) if vocabulary.is_metric(metric) else "value"
            files.setdefault(sub.benchmark, []).append({
                "dataset": {"id": benchmarks.get(sub.benchmark).hub_id,
                            "task_id": f"{sub.config}/{sub.split}/{metric}"},
                "value": round(float(m["estimate"]), 6),
                "date": sub.created_at[:10],
                "source": source_of(sub, space_url),
                "notes": (
                    f"{unit}; "
                    + (f"95% cluster-bootstrap interval [{m['low']:.6g}, {m['high']:.6g}]; "
                       if m.get("low") is not None else "")
                    +
                    f"ties={sub.results.get('ties', 'expected')}; data revision {sub.data_revision}; "
                    f"model revision {sub.metadata.get('model_revision', '')}; submission {sub.id} v{sub.version}"
                ),
            })
    return {f".eval_results/hardneg-{b.replace('_', '-')}.yaml": yaml.safe_dump(entries, sort_keys=False)
            for b, entries in files.items()}
