"""The shared --backend/--ray-address/--workers/--batch-size options."""

from __future__ import annotations

import argparse

import pytest

from hardneg.runner import add_backend_arguments, backend_kwargs


def parse(*argv):
    p = argparse.ArgumentParser()
    add_backend_arguments(p, default_batch_size=64)
    return p.parse_args(list(argv))


def test_defaults_are_local_single_worker():
    assert backend_kwargs(parse()) == {"backend": "local", "ray_address": None, "num_workers": 1,
                                       "batch_size": 64, "num_gpus": 0, "ray_runtime_env": None}


def test_ray_options_pass_through():
    kw = backend_kwargs(parse("--backend", "ray", "--ray-address", "auto", "--workers", "4", "--batch-size", "32",
                              "--num-gpus", "0.5", "--ray-runtime-env", '{"pip": ["video-hardneg"]}'))
    assert kw == {"backend": "ray", "ray_address": "auto", "num_workers": 4, "batch_size": 32, "num_gpus": 0.5,
                  "ray_runtime_env": {"pip": ["video-hardneg"]}}


@pytest.mark.parametrize(
    "argv, match",
    [
        (("--workers", "0"), "--workers"),
        (("--batch-size", "0"), "--batch-size"),
        (("--ray-address", "auto"), "need --backend ray"),
        (("--backend", "ray", "--ray-runtime-env", "{pip"), "not valid JSON"),
    ],
)
def test_bad_options_are_explained(argv, match):
    with pytest.raises(ValueError, match=match):
        backend_kwargs(parse(*argv))


def test_unknown_backend_is_rejected_by_argparse():
    with pytest.raises(SystemExit):
        parse("--backend", "spark")
