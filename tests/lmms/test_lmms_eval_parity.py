"""`--protocol-set lmms-eval` against lmms-eval 0.7.3 itself (issue 40, item 1).

lmms-eval's own TempCompass (`tempcompass_caption_matching`) and VITATECS (`vitatecs_direction`) tasks, their YAML
and utils.py unchanged but for `dataset_path` (a local copy of the first 15 released questions and 12 released
pairs, ../shared/realdata), run through its Python API (`simple_evaluate`) offline with its own wrapper for each
tiny model: `qwen2_vl` (the simple Qwen2-VL class) on the tiny Qwen2-VL, `qwen2_5_vl` (the chat Qwen2.5-VL class
its registry resolves) on the tiny Qwen2.5-VL; both complete Hub folders. What lmms-eval did is recorded from its
own objects (tests/lmms/run_lmms_eval.py). Then hardneg's `VideoLLM`, in the `lmms-eval` protocol set (with that
family's harness, `VLMPrompt.model_harness`), scores each of the same items, and must give item by item:

* the same frames, decoded by hardneg (the set's own frame recipe);
* the same chat text (system turn, task prompt) and the same prompt tokens (video tokens expanded);
* the same pixels (the harness's pixel limits) and, for Qwen2.5-VL, the same `second_per_grid_ts`, the same 3-D
  positions as the installed transformers' `get_rope_index` gave lmms-eval, and the same dtype (bfloat16);
* the same generation settings (greedy, the token cap) and the same answer after the wrapper's cut and strip;
* the same decision (lmms-eval's rating, or its judge: undecided) and score, and the same accuracy.

A second lmms-eval run feeds the wrapper known raw answers (its `generate` returns their tokens) so that its own
decoding, "\\n\\n" cut and strip (or none), rule and judge-or-0 run on forms a random tiny model never writes.

Each mutation (system turn, frames, token cap, strip/cut, undecided rule; for Qwen2.5-VL also dtype and positions)
changed back must make the comparison fail (parametrized below). "Changed back" is hardneg's default; for the system
turn it is another text than the wrapper's: the published Qwen2-VL and Qwen2.5-VL chat templates (the tiny folders'
since issue 48) write the wrapper's "You are a helpful assistant." themselves when no system turn is given, so no
system turn and the wrapper's are the same prompt.

`hardneg run --protocol-set lmms-eval` on the same built items and videos must give the same answers and accuracy.

The tiny Qwen2.5-VL runs with `min_pixels=3136` given to lmms-eval's wrapper and to hardneg's set alike: the
wrapper's default of 256*28*28 per frame, with the tiny model's 4-pixel patches, makes a 26,000-token prompt per
item (about 10 s each on a CPU). That the set's defaults are the wrapper's own is checked from its signature.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .helpers import lmms_eval_root
from .parity_data import prepare

pytestmark = [pytest.mark.slow, pytest.mark.realdata]

HERE = Path(__file__).resolve().parent
TASKS = {"tempcompass": "tempcompass_caption_matching", "vitatecs": "vitatecs_direction"}
#: tiny architecture -> (lmms-eval model name, hardneg model name, model_args given to both harnesses)
ARCHS = {"qwen2-vl": ("qwen2_vl", "tiny-vlm", {}),
         "qwen2.5-vl": ("qwen2_5_vl", "tiny-vlm:qwen2.5-vl", {"min_pixels": 3136})}
#: raw answers for the crafted run: whitespace, "\n\n" cuts, "</s>", bare letters, undecided text
CRAFTED = [" A\n\nBecause the man moves.", "(B)", "A</s>", "B ", "\n\nA", "Caption A", "(A) something", "B.",
           "I am not sure", "A)", " Caption B \n", "b"]


def _run_lmms_eval(data: dict, work: Path, crafted: list[str] | None, arch: str) -> dict:
    from hardneg.models.vlm.tiny import tiny_vlm_path

    n = len(data["tempcompass"]) + len(data["vitatecs"])
    cfg = {"hf_home": str(data["hf_home"]), "tasks_dir": str(data["tasks_dir"]), "tasks": list(TASKS.values()),
           "pretrained": str(tiny_vlm_path(arch)), "model": ARCHS[arch][0], "model_args": ARCHS[arch][2],
           "crafted": None if crafted is None else [crafted[k % len(crafted)] for k in range(n)]}
    work.mkdir(parents=True, exist_ok=True)
    (work / "cfg.json").write_text(json.dumps(cfg))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(Path.cwd() / "src"), os.environ.get(
        "PYTHONPATH", "")) if p)}
    got = subprocess.run([sys.executable, str(HERE / "run_lmms_eval.py"), str(work / "cfg.json"),
                          str(work / "out" / "out.json")], env=env, capture_output=True, text=True, timeout=1200)
    assert got.returncode == 0, got.stderr[-3000:]
    return json.loads((work / "out" / "out.json").read_text())


@pytest.fixture(scope="module", params=list(ARCHS))
def lmms(request, realdata, tmp_path_factory):
    arch = request.param
    root = lmms_eval_root()
    work = tmp_path_factory.mktemp(f"lmms_parity_{arch}")
    data = prepare(realdata, root, work)
    real = _run_lmms_eval(data, work / "real", None, arch)
    crafted = _run_lmms_eval(data, work / "crafted", CRAFTED, arch)
    return data, real, crafted, work, arch


@pytest.fixture(scope="module")
def ours(lmms):
    """hardneg's items of the same local copies (hardneg build) and the same tiny model as a VideoLLM."""
    from hardneg.datasets import build_benchmark
    from hardneg.items import load_benchmark
    from hardneg.models import load_model

    data, _, _, work, arch = lmms
    items = {}
    for name, raw in (("tempcompass", data["tempcompass_raw"]), ("vitatecs", data["vitatecs_raw"])):
        built = build_benchmark(name, raw, work / "built" / name).out
        items[name] = load_benchmark(str(built), "all", benchmark=name).items.to_pylist()
    return items, load_model(ARCHS[arch][1], device="cpu")


def _test_args(spec, arch: str):
    """The set's spec with the model_args this test gives lmms-eval's wrapper too (Qwen2.5-VL: min_pixels)."""
    args = ARCHS[arch][2]
    if "min_pixels" not in args:
        return spec
    pixels = (args["min_pixels"], spec.pixels[1])
    return dataclasses.replace(spec, pixels=pixels, frames=dataclasses.replace(spec.frames, pixels=pixels))


def _item_for(name: str, items, sample: dict) -> dict:
    """Our item with lmms-eval's document's question and video."""
    from hardneg import benchmarks

    spec = benchmarks.get(name).vlm_for("lmms-eval")
    found = [it for it in items if spec.function("item_text")(it) in sample["prompt"]
             and f"{it['video_id']}.mp4" == sample["video"]]
    assert len(found) >= 1, sample["prompt"][:120]
    return found[0]  # an exact duplicate pair of the release is the same item twice


def _records(run: dict) -> list[tuple[str, dict, dict, dict]]:
    """(benchmark, sample, its render, its video record) for every document lmms-eval scored."""
    rec = run["record"]
    out = []
    for name, task in TASKS.items():
        for s in run["samples"][task]:
            k = [i for i, (r, v) in enumerate(zip(rec["renders"], rec["render_videos"]))
                 if s["prompt"] in r and Path(v).name == s["video"]]
            assert len(k) == 1
            out.append((name, s, rec["renders"][k[0]], {**rec["videos"][k[0]], **rec["generate"][k[0]]}))
    return out


def _compare(lmms, ours, mutate: str | None = None, run: str = "real", first: bool = False) -> list[str]:
    """Every difference between lmms-eval and hardneg's lmms-eval set, item by item (empty: parity); `first`: stop
    at the first item that differs."""
    import torch

    from hardneg import benchmarks
    from hardneg.models.vlm.engine import Engine
    from hardneg.video import FrameSettings, UnscorableVideo, decode_frames, frame_times

    data, real, crafted, _, arch = lmms
    got = real if run == "real" else crafted
    items, model = ours
    fam = model.engine.family
    diffs = []
    n_right = {name: [0, 0] for name in TASKS}
    for name, sample, render, video in _records(got):
        if first and diffs:
            break
        decl = benchmarks.get(name)
        spec = _test_args(model.use_protocol(decl, protocol_set="lmms-eval"), arch)
        fam.min_pixels, fam.max_pixels = spec.pixels
        if mutate == "system":  # another system turn than the wrapper's (the published Qwen2-VL / Qwen2.5-VL
            # templates write "You are a helpful assistant." when none is given, so none and the wrapper's are one text)
            spec = dataclasses.replace(spec, system="You are a video assistant.")
        elif mutate == "token cap":
            spec = dataclasses.replace(spec, max_new_tokens=32)
        elif mutate == "strip/cut":  # hardneg's default: neither
            spec = dataclasses.replace(spec, answers=dataclasses.replace(spec.answers, stop=(), strip=False))
        elif mutate == "undecided":
            spec = dataclasses.replace(spec, answers=dataclasses.replace(spec.answers, undecided="tie"))
        elif mutate == "dtype":  # hardneg's CPU dtype
            spec = dataclasses.replace(spec, dtype=None)
        elif mutate == "positions":  # Qwen's published rule
            spec = dataclasses.replace(spec, positions=None)
        model.spec = spec
        model._use_dtype(spec.dtype)
        fam.position_rule = spec.positions or "qwen"
        if str(model.engine.dtype) != video["dtype"]:
            diffs.append(f"{name}: dtype {model.engine.dtype} vs {video['dtype']}")
        item = _item_for(name, items[name], sample)
        question = spec.function("item_text")(item)
        # hardneg's own frames of the video in this set (the family's qwen-vl-utils recipe); changed back: its
        # defaults (8, shorter side 224, spread uniformly)
        settings = FrameSettings() if mutate == "frames" else spec.frames
        decoded = decode_frames(data["videos"] / f"{item['video_id']}.mp4", settings)
        frames = np.asarray(decoded)
        theirs_frames = np.load(video["frames"])
        if frames.shape != theirs_frames.shape or not np.array_equal(frames, theirs_frames):
            diffs.append(f"{name} {item['id']}: frames differ ({frames.shape} vs {theirs_frames.shape})")
        # the chat text and the prompt tokens
        r = model.engine.render(spec)
        text = r.before_video + model.engine.video_token + r.head + question + r.tail
        want_text = render.replace("<|video_pad|>", model.engine.video_token)
        if text != want_text:
            diffs.append(f"{name} {item['id']}: chat text differs")
        vin = fam.video_inputs(frames, torch.float32, "cpu", timestamps=frame_times(decoded))
        lead, _ = model.engine._encode(r.before_video)
        body, _ = model.engine.encode_with_data(r.head, question, r.tail)
        ids = lead + [model.engine.video_token_id] * vin.n_tokens + body
        if ids != video["input_ids"]:
            diffs.append(f"{name} {item['id']}: prompt tokens differ ({len(ids)} vs {len(video['input_ids'])})")
        theirs_px = np.load(video["pixels"])
        px = vin.kwargs["pixel_values_videos"].numpy()
        if px.shape != theirs_px.shape or np.abs(px - theirs_px).max() > 1e-4:
            diffs.append(f"{name} {item['id']}: pixels differ")
        spg = vin.kwargs.get("second_per_grid_ts")
        if (None if spg is None else spg.tolist()) != video["second_per_grid_ts"]:
            diffs.append(f"{name} {item['id']}: second_per_grid_ts {spg} vs {video['second_per_grid_ts']}")
        if ids == video["input_ids"]:  # the 3-D positions of the prompt, as the installed transformers gave them
            pos = fam._positions(ids, vin)
            if not np.array_equal(pos, np.load(video["positions"])):
                diffs.append(f"{name} {item['id']}: positions differ")
        if (video["max_new_tokens"], video["do_sample"]) != (spec.max_new_tokens, False):
            diffs.append(f"{name} {item['id']}: generation settings differ")
        # the answer, its decision and its score
        model.set_item({"captions": list(item["captions"]), "provenance": item["provenance"]})
        if run == "crafted":
            model.engine.generate = lambda *a, _t=video["raw"], **k: _t  # the raw text lmms-eval's wrapper decoded
        else:
            model.engine.generate = Engine.generate.__get__(model.engine)
        model._answers.clear()
        try:
            scores = model.score(decoded, list(item["captions"]))  # with its frame times (Qwen2.5-VL's spacing)
        except UnscorableVideo as exc:
            diffs.append(f"{name} {item['id']}: hardneg cannot score it ({exc})")
            continue
        log = model.generation_log[-1]
        # the wrapper's answer as the task's rule gets it: lmms-eval strips every generate_until result first
        # (api/task.py, ConfigurableTask.process_results); the Qwen2-VL wrapper has stripped it already
        if log["answer"] != sample["answer"].strip():
            diffs.append(f"{name} {item['id']}: answer {log['answer'][:40]!r} vs {sample['answer'][:40]!r}")
        decided = log["decided_by"] is not None
        if decided != bool(sample["match_success"]):
            diffs.append(f"{name} {item['id']}: decided {decided} vs match_success {sample['match_success']} "
                         f"({log['answer'][:40]!r})")
        label = int(item["label"])
        if decided:
            rating = int(scores[label] > scores[1 - label])
        else:  # the protocol set's undecided rule: "wrong" scores 0; a tie counts as half a right answer
            rating = 0 if spec.answers.undecided == "wrong" else 0.5
        if rating != sample["rating"]:
            diffs.append(f"{name} {item['id']}: score {rating} vs rating {sample['rating']}")
        n_right[name][0] += rating
        n_right[name][1] += 1
    for name, task in TASKS.items():
        key = "avg_accuracy,none" if name == "tempcompass" else "accuracy,none"
        mine = 100 * n_right[name][0] / max(n_right[name][1], 1)
        if not first and (n_right[name][1] < len(got["samples"][task])
                          or abs(mine - got["results"][task][key]) > 1e-9):
            diffs.append(f"{name}: accuracy {mine} vs {got['results'][task][key]}")
    return diffs


def test_lmms_eval_ran_offline_on_every_item(lmms):
    data, real, crafted, _, arch = lmms
    for run in (real, crafted):
        assert {t: len(s) for t, s in run["samples"].items()} == {TASKS["tempcompass"]: 15, TASKS["vitatecs"]: 12}
        assert run["shims"]["filelock"] in (True, False)
        # the class simple_evaluate resolved: lmms-eval's chat Qwen2.5-VL, its simple Qwen2-VL
        assert run["wrapper"] == {"qwen2-vl": "lmms_eval.models.simple.qwen2_vl.Qwen2_VL",
                                  "qwen2.5-vl": "lmms_eval.models.chat.qwen2_5_vl.Qwen2_5_VL"}[arch]


def test_the_sets_qwen2_5_vl_defaults_are_the_wrappers_own():
    """The harness settings not exercised at their defaults above (pixels; the tiny model runs at min_pixels=3136)
    are the defaults of lmms-eval's own Qwen2.5-VL class, read from its signature."""
    lmms_eval_root()
    from lmms_eval.models.chat.qwen2_5_vl import Qwen2_5_VL

    from hardneg import benchmarks

    defaults = {k: v.default for k, v in inspect.signature(Qwen2_5_VL.__init__).parameters.items()}
    for name in TASKS:
        spec = benchmarks.get(name).vlm_for("lmms-eval").for_model_type("qwen2_5_vl")
        assert spec.pixels == spec.frames.pixels == (defaults["min_pixels"], defaults["max_pixels"])
        assert spec.frames.n_frames == defaults["max_num_frames"] and defaults["fps"] is None
        assert defaults["system_prompt"] == "You are a helpful assistant."  # the simple class's; the chat one sends none
        assert (spec.dtype, spec.positions, spec.system) == ("bfloat16", "transformers", None)


def test_same_prompts_tokens_pixels_answers_decisions_scores_as_lmms_eval(lmms, ours):
    diffs = _compare(lmms, ours)
    assert diffs == [], "\n".join(diffs)


def test_some_clips_are_resized_twice_as_the_parity_above_covers(lmms, ours):
    """Issue 48 item 6: among the frames lmms-eval's wrapper handed its processor (qwen-vl-utils' output, multiples
    of 28), some are not multiples of the tiny model's factor (patch x merge = 8), so its processor resized them a
    second time; the parity test above compares those items' pixels too (`parity_data.ODD_SIZE`)."""
    _, real, _, _, _ = lmms
    fam = ours[1].engine.family
    factor = fam.patch * fam.merge
    shapes = {np.load(v["frames"], mmap_mode="r").shape[1:3] for *_, v in _records(real) if v.get("frames")}
    assert any(h % 28 == 0 and w % 28 == 0 for h, w in shapes)
    assert any(h % factor or w % factor for h, w in shapes), shapes
    assert any(not (h % factor or w % factor) for h, w in shapes), shapes


def test_same_cut_strip_decisions_and_scores_on_crafted_answers(lmms, ours):
    _, _, crafted, _, _ = lmms
    assert any(not s["match_success"] for t in crafted["samples"].values() for s in t)  # some go to the judge
    diffs = _compare(lmms, ours, run="crafted")
    assert diffs == [], "\n".join(diffs)


@pytest.mark.parametrize("mutate, run", [("system", "real"), ("frames", "real"), ("token cap", "real"),
                                         ("strip/cut", "crafted"), ("undecided", "crafted"), ("dtype", "real"),
                                         ("positions", "real")])
def test_changing_back_any_setting_breaks_parity(lmms, ours, mutate, run):
    if mutate in ("dtype", "positions") and lmms[4] != "qwen2.5-vl":
        pytest.skip("lmms-eval's Qwen2-VL wrapper runs the checkpoint's dtype and positions (hardneg's own)")
    assert _compare(lmms, ours, mutate=mutate, run=run, first=True) != []


def test_hardneg_run_protocol_set_lmms_eval_equals_lmms_eval(lmms, tmp_path, capsys):
    """The whole `hardneg run --protocol-set lmms-eval` (its own decoder, frames, prompts, generation, rules, undecided
    rule and evaluation) on the same items and videos: lmms-eval's answers and accuracy. The model_args this test
    gives lmms-eval's wrapper (Qwen2.5-VL: min_pixels) are given to hardneg run from its command line
    (`--processor-kwargs`: the processor's pixel limits and the qwen-vl-utils frames' alike), no patch."""
    from hardneg.cli import main

    data, real, _, work, arch = lmms
    model_args = ARCHS[arch][2]
    flags = ["--processor-kwargs", ",".join(f"{k}={v}" for k, v in model_args.items())] if model_args else []
    built = work / "built_run"
    from hardneg.datasets import build_benchmark

    for name in TASKS:
        build_benchmark(name, data[f"{name}_raw"], built / name)
    assert main(["run", "--model", ARCHS[arch][1], "--benchmarks", ",".join(TASKS), "--data", str(built), "--videos",
                 str(data["videos"]), "--out", str(tmp_path / "R"), "--resamples", "0", "--no-charts",
                 "--no-progress", "--device", "cpu", "--protocol-set", "lmms-eval", *flags]) == 0
    results = json.loads((tmp_path / "R" / "results.json").read_text())
    for name, task in TASKS.items():
        res = results[f"{name}/all"]
        assert res["provenance"]["frames"].get("processor_kwargs", {}) == model_args  # recorded as given
        key = "avg_accuracy,none" if name == "tempcompass" else "accuracy,none"
        assert res["metrics"]["Accuracy"]["value"] == pytest.approx(real["results"][task][key] / 100, abs=1e-12)
        gen = res["run"]["generation"]
        assert gen["answers"] == len(real["samples"][task])
        ours = {}
        for u in gen["undecided_items"]:
            ours.setdefault(u["question"], []).append(u["answer"])
        for s in real["samples"][task]:
            if not s["match_success"]:  # every answer its rule could not decide is listed with its question
                q = [q for q in ours if q in s["prompt"]]
                # as the task's rule got it: stripped (api/task.py, ConfigurableTask.process_results)
                assert q and s["answer"].strip() in ours[q[0]], s["answer"][:60]
        assert gen["undecided"] == sum(not s["match_success"] for s in real["samples"][task])
