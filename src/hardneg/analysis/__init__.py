"""The papers' analyses as library functions: each returns a result with a table, `to_dict()` and `plot(path)`.

| analysis | paper | function |
|---|---|---|
| label-correction | FIRE Table 1 | `label_correction` |
| pooling-bias | FIRE Table 4 | `pooling_bias` |
| judgment-budget | FIRE §4.3, Fig. 4 | `judgment_budget` |
| overlap | FIRE Table 3 | `system_overlap` (RBO in `hardneg.analysis.rbo`) |
| caption-length | FIRE Figs. 2-3 | `caption_length_analysis` |
| contrast-breakdown | contrast sets Table 5 | `contrast_breakdown` |
| sensitivity | Feint6K Fig. 5 | `sensitivity` |
| blind-text | (any MC set) | `blind_text_check` |
| duplicates | PoSRank Fig. 3 | `duplicate_analysis` |
| cross-benchmark | (any benchmarks sharing videos) | `cross_benchmark_view` |

Submodules are imported on first use so that importing one analysis does not pull
in scikit-learn, spaCy or sentence-transformers.
"""

from __future__ import annotations

import importlib

#: public name -> (module, attribute)
_EXPORTS = {
    "AnalysisResult": ("base", "AnalysisResult"),
    "label_correction": ("fire_label_correction", "label_correction"),
    "pooling_bias": ("fire_pooling_bias", "pooling_bias"),
    "pools_from_topk": ("fire_pooling_bias", "pools_from_topk"),
    "pools_from_column": ("fire_pooling_bias", "pools_from_column"),
    "judgment_budget": ("fire_judgment_budget", "judgment_budget"),
    "system_overlap": ("fire_overlap", "system_overlap"),
    "rbo_ext": ("rbo", "rbo_ext"),
    "caption_length_analysis": ("fire_caption_length", "caption_length_analysis"),
    "contrast_breakdown": ("contrast_sets_breakdown", "contrast_breakdown"),
    "sensitivity": ("feint6k_sensitivity", "sensitivity"),
    "blind_text_check": ("blind_text", "blind_text_check"),
    "surface_classifier_scores": ("blind_text", "surface_classifier_scores"),
    "duplicate_analysis": ("posrank_duplicates", "duplicate_analysis"),
    "cross_benchmark_view": ("cross_benchmark", "cross_benchmark_view"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        module, attr = _EXPORTS[name]
        return getattr(importlib.import_module(f"hardneg.analysis.{module}"), attr)
    raise AttributeError(f"module 'hardneg.analysis' has no attribute {name!r}")
