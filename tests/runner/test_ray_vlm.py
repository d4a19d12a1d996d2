"""Video LLMs on the Ray runner (issue 35): one actor per CPU slot of a local 2-CPU Ray instance (per GPU on a GPU
cluster), each loading the model by name; the predictions equal the single-process run's on the built-in samples,
an items-per-video benchmark and a retrieval one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ray
ray = pytest.importorskip("ray")

import hardneg  # noqa: E402

BENCHES = ("feint6k", "fire")
RUNTIME_ENV = {"env_vars": {"PYTHONPATH": str(Path(hardneg.__file__).resolve().parents[1]),  # this checkout's code
                            "HF_HUB_OFFLINE": "1"}}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from hardneg.datasets import build_samples, sample_video_ids
    from hardneg.video import write_synthetic_video

    samples = build_samples(tmp_path_factory.mktemp("samples"), benchmarks=BENCHES)
    folder = tmp_path_factory.mktemp("videos")
    for b in BENCHES:
        for vid in sample_video_ids(b):
            write_synthetic_video(folder / f"{vid}.mp4", vid, n_frames=8, size=32)
    return samples, folder


@pytest.fixture(scope="module")
def ray_cluster():
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING", runtime_env=RUNTIME_ENV)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


# slow group: a Ray instance and a tiny video LLM on two benchmarks, one process and two actors (~70 s of the quick
# group's time on the shared 2-core machine); the Ray runner itself stays quick in test_ray.py, the video LLMs in tests/vlm
@pytest.mark.slow
def test_video_llm_on_ray_equals_one_process(data, ray_cluster, tmp_path):
    import pyarrow.parquet as pq

    from hardneg.items import card_configs
    from hardneg.scoring import score_benchmark
    from hardneg.video import FrameSettings

    samples, videos = data
    frames = FrameSettings(n_frames=4, resize=32)
    checked = 0
    for bench in BENCHES:
        config = sorted(card_configs(samples[bench]))[0]
        got = {}
        for tag, kw in (("one", {}), ("ray", {"backend": "ray", "num_workers": 2, "ray_address": ray_cluster,
                                               "ray_runtime_env": RUNTIME_ENV})):
            out = tmp_path / tag / f"{bench}.parquet"
            score_benchmark("tiny-vlm", str(samples[bench]), config, out, videos=str(videos), frames=frames,
                            cache_dir=str(tmp_path / tag / "cache"), device="cpu", progress=False, batch_size=4, **kw)
            got[tag] = pq.read_table(out)
        one, dist = got["one"], got["ray"]
        assert one.column("id").to_pylist() == dist.column("id").to_pylist() and one.num_rows > 0
        for a, b in zip(one.column("scores").to_pylist(), dist.column("scores").to_pylist()):
            np.testing.assert_allclose(np.asarray(b, float), np.asarray(a, float), rtol=0, atol=1e-5)
        checked += 1
    assert checked == len(BENCHES)
