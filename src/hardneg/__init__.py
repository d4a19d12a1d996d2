"""video-hardneg: does a video-text model understand the video, or only the objects in one frame?

The library behind the Hub datasets, the `evaluate` metric modules, the negative
generators, model scoring, the demo Space and the leaderboard.
"""

__version__ = "0.1.0"

import _hardneg_torchvision  # noqa: E402

_hardneg_torchvision.install()  # PyPI's CUDA torchvision beside a CPU torch: see src/_hardneg_torchvision.py

#: the front-door functions, imported on first use so `import hardneg` stays light
_LAZY = {"run_model": ("hardneg.run", "run_model"), "metric_path": ("hardneg.metric_modules", "metric_path"),
         "train": ("hardneg.training.trainer", "train")}
#: the settings objects the front-door functions are built on (`hardneg.settings`)
_LAZY.update({name: ("hardneg.settings", name) for name in ("ModelSpec", "RunSpec", "EvalSettings", "Execution",
                                                            "FrameSettings")})


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'hardneg' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])
