"""Issue 48 item 3: inputs are said, not silently dropped. A video longer than the model's context is refused before
scoring, with both numbers and the fix, and counted; a folder without weights is a clear error; the generic types'
provenance holds the processor's own normalisation; `--processor-kwargs` reaches the processor and provenance; the
tiny models have CLI names that `hardneg models` and `run --help` list."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from hardneg.cli import main


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """The built VITATECS sample and its synthetic videos."""
    from hardneg.datasets import build_samples
    from hardneg.items import load_benchmark
    from hardneg.run import sample_videos

    root = tmp_path_factory.mktemp("inputs_said")
    build_samples(root / "data")
    ids = sorted(set(load_benchmark(str(root / "data" / "vitatecs"), "all").items["video_id"].to_pylist()))
    return root / "data", sample_videos(ids, root / "cache")


def _run(samples, out, *flags) -> int:
    data, videos = samples
    return main(["run", "--benchmarks", "vitatecs", "--data", str(data), "--videos", str(videos), "--out", str(out),
                 "--resamples", "0", "--no-charts", "--no-progress", "--device", "cpu", *flags])


@pytest.mark.slow  # three runs of a tiny model over the samples (about 30 s): the slow group
def test_a_video_longer_than_the_context_is_refused_before_scoring_with_both_numbers(samples, tmp_path, capsys):
    """tiny-vlm:hy-v4-vl at 224 px: 6,498 video tokens, over its 4,096-token context: every video is refused before
    anything is scored, the reason printed (both numbers, --resize / --frames) and counted as too long."""
    assert _run(samples, tmp_path / "R", "--model", "tiny-vlm:hy-v4-vl") == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("hardneg run: vitatecs/all:"))
    assert "too long for the model" in line and "video tokens" in line and "context of 4,096" in line
    assert "--resize" in line and "--frames" in line
    meta = json.loads(pq.read_schema(tmp_path / "R" / "predictions" / "vitatecs-all.parquet").metadata[b"hardneg"])
    videos = meta["videos"]
    assert videos["too_long"] > 0 and videos["unreadable"] == 0 and videos["ok"] == 0
    assert all("context of 4,096" in why for why in videos["too_long_ids"].values())
    # smaller frames fit: scored, nothing refused
    assert _run(samples, tmp_path / "S", "--model", "tiny-vlm:hy-v4-vl", "--resize", "112") == 0
    res = json.loads((tmp_path / "S" / "results.json").read_text())["vitatecs/all"]
    assert res["videos"]["ok"] > 0 and not res["videos"].get("too_long")


def test_the_table_counts_videos_refused_as_too_long():
    from hardneg.run import video_cell

    assert video_cell({"ok": 3, "missing": 1, "unreadable": 0, "too_long": 2}) == "3 ok/3 bad (2 too long)"
    assert video_cell({"ok": 3, "missing": 1, "unreadable": 1}) == "3 ok/2 bad"


def test_the_refusal_counts_the_processors_tokens_once_per_frame_shape():
    from hardneg.models import load_model

    m = load_model("tiny-vlm:hy-v4-vl", device="cpu")
    big, small = np.zeros((8, 224, 224, 3), np.uint8), np.zeros((2, 32, 32, 3), np.uint8)
    why = m.video_refusal(big)
    assert why and "8 frames of 224x224" in why and "4,096" in why
    assert m.video_refusal(small) is None


def test_a_model_folder_without_weights_is_a_clear_error(samples, tmp_path, capsys):
    from hardneg.models.vlm.tiny import tiny_vlm_path

    folder = tmp_path / "no-weights"
    shutil.copytree(tiny_vlm_path("qwen3-vl"), folder)
    for p in folder.glob("*.safetensors"):
        p.unlink()
    assert _run(samples, tmp_path / "R", "--model", str(folder)) == 2
    err = capsys.readouterr().err
    assert "holds no weights" in err and "config.json" in err and "Traceback" not in err


def test_generic_provenance_records_the_processors_own_normalisation():
    """Gemma 4's processor does not use CLIP's mean and std (0 and 1): provenance says what the processor does."""
    from hardneg.models import load_model

    fam = load_model("tiny-vlm:gemma4", device="cpu").engine.family
    vp = fam.processor.video_processor
    ident = fam.identity()
    assert ident["mean"] == [float(x) for x in vp.image_mean] == [0.0, 0.0, 0.0]
    assert ident["std"] == [float(x) for x in vp.image_std] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("text, want", [
    ("min_pixels=3136,max_pixels=602112", {"min_pixels": 3136, "max_pixels": 602112}),
    ('{"size": {"longest_edge": 300, "shortest_edge": 32}, "fps": 2.0}',
     {"size": {"longest_edge": 300, "shortest_edge": 32}, "fps": 2.0}),
    ("do_resize=false,name=abc", {"do_resize": False, "name": "abc"}),
    ("", {}),
])
def test_processor_kwargs_parse_json_or_k_v(text, want):
    from hardneg.video import FrameSettings, parse_processor_kwargs

    frames = FrameSettings(processor=parse_processor_kwargs(text))
    assert frames.processor_kwargs() == want
    assert hash(frames) == hash(FrameSettings(processor=want))  # hashable and canonical
    assert frames.identity().get("processor_kwargs", {}) == want


@pytest.mark.parametrize("bad", ["min_pixels", "{not json", "1x=2", "[1, 2]"])
def test_processor_kwargs_refuse_bad_text(bad):
    from hardneg.video import parse_processor_kwargs

    with pytest.raises(ValueError, match="processor"):
        parse_processor_kwargs(bad)


def test_processor_kwargs_reach_the_processor_and_provenance(samples, tmp_path):
    """The generic family passes them to the processor (fewer video patches with a smaller size), they are in
    results.json's frames provenance, and the hand-written and non-LLM models refuse what they cannot take."""
    from hardneg.models import load_model
    from hardneg.models.vlm.generic import use_processor_kwargs

    m = load_model("tiny-vlm:qwen3-vl", device="cpu")
    frames = np.random.default_rng(0).integers(0, 255, (4, 64, 96, 3), dtype=np.uint8)
    fam = m.engine.family
    before = fam.video_inputs(frames, m.engine.dtype, "cpu").kwargs["pixel_values_videos"].shape
    use_processor_kwargs(m, {"size": {"longest_edge": 300, "shortest_edge": 32}})
    after = fam.video_inputs(frames, m.engine.dtype, "cpu").kwargs["pixel_values_videos"].shape
    assert after[0] < before[0]
    with pytest.raises(ValueError, match="hardneg gives the processor"):
        use_processor_kwargs(m, {"videos": []})
    q = load_model("tiny-vlm:qwen2.5-vl", device="cpu")
    use_processor_kwargs(q, {"min_pixels": 1024})
    assert q.engine.family.min_pixels == 1024
    with pytest.raises(ValueError, match="hand-written"):
        use_processor_kwargs(q, {"fps": 2})
    flag = '{"size": {"longest_edge": 300, "shortest_edge": 32}}'
    assert _run(samples, tmp_path / "R", "--model", "tiny-vlm:qwen3-vl", "--processor-kwargs", flag) == 0
    res = json.loads((tmp_path / "R" / "results.json").read_text())["vitatecs/all"]
    assert res["provenance"]["frames"]["processor_kwargs"] == json.loads(flag)
    assert _run(samples, tmp_path / "C", "--model", "tiny-clip", "--processor-kwargs", "fps=2") == 2


def test_tiny_models_are_listed_and_the_tiny_encoders_have_cli_names(capsys):
    from hardneg.models.tiny_encoders import KINDS
    from hardneg.models.vlm.tiny import ARCHITECTURES

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert all(f"tiny-vlm:{a}" in out for a in ARCHITECTURES)
    assert main(["models", "--encoders"]) == 0
    out = capsys.readouterr().out
    assert all(f"tiny-dual:{k}" in out for k in KINDS)
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # argparse wraps at hyphens
    assert all(f"tiny-vlm:{a}" in help_text for a in ARCHITECTURES if a != "qwen2-vl")
    assert all(f"tiny-dual:{k}" in help_text for k in KINDS)


def test_tiny_dual_names_load_the_tiny_encoders():
    from hardneg.models import load_model

    m = load_model("tiny-dual:siglip", device="cpu")
    assert m.model_id == "hardneg/tiny-dual-siglip"
    emb = m.encode_text(["a dog runs"])
    assert emb.shape[0] == 1
    with pytest.raises(ValueError, match="tiny-dual:clip"):
        load_model("tiny-dual:nope", device="cpu")
