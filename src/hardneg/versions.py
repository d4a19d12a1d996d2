"""The versions of the packages that change a model's numbers, recorded with every result (issue 33).

A tokenizer or decoder release can move a score; two machines with different versions can print different
numbers from the same command. `number_versions()` is the one place that says which packages count
(transformers, torch, tokenizers, av, numpy, and hardneg itself); every predictions file
(`hardneg.schema.predictions_metadata`) and every result (`hardneg.evaluation.provenance`, so results.json)
records it. It reads installed metadata only: nothing is imported, so it costs nothing where torch is absent.
"""

from __future__ import annotations

#: the packages whose version can change a number (distribution names)
NUMBER_PACKAGES = ("transformers", "torch", "tokenizers", "av", "numpy")


def number_versions() -> dict[str, str | None]:
    """{package: installed version, or None when not installed}, hardneg's own first."""
    from importlib.metadata import PackageNotFoundError, version

    from hardneg import __version__

    out: dict[str, str | None] = {"hardneg": __version__}
    for name in NUMBER_PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out
