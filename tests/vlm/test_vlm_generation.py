"""The generate-match protocol and protocol sets (issue 32): the authors' per-item question byte for byte, their
rule matcher on every released answer, greedy decoding cached == naive, undecided answers listed, and
`--protocol-set` / per-benchmark `--prompt` covering every benchmark with each protocol's source."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hardneg import benchmarks
from hardneg.benchmarks import tempcompass, vitatecs
from hardneg.benchmarks.base import PROTOCOL_SETS, VLMPrompt
from hardneg.models import load_model
from hardneg.models.vlm.support import tiny_names
from hardneg.models.prompting import parse_prompts

ARCHS = tiny_names()  # every type `hardneg models` marks verified (hardneg.models.vlm.support)
POST = "\nPlease directly give the best option:"  # TempCompass run_qwen2_vl.py, answer_prompt["caption_matching"]


def _judged_files(realdata):
    files = sorted((realdata / "tempcompass").glob("auto_eval_results_*_caption_matching.json"))
    assert len(files) == 2
    return files


def _entries(path):
    for video, aspects in json.loads(path.read_text()).items():
        for aspect, entries in aspects.items():
            yield from entries


def test_the_rule_reproduces_the_authors_match_success_and_rating_on_every_released_answer(realdata):
    from hardneg.datasets.samples import sample_raw_dir

    files = _judged_files(realdata) + [sample_raw_dir("tempcompass") / "auto_eval_results_toy-model_caption_matching.json"]
    for path in files:
        n = undecided = 0
        for e in _entries(path):
            n += 1
            got = tempcompass.eval_rule_rating(e["video-llm-prediction"], e["question"], e["gt-answer"])
            assert (got is not None) == e["match_success"], (path.name, e)
            if got is None:
                undecided += 1
                continue
            assert got == e["rating"], (path.name, e)
            # the option the protocol's matcher picks is right exactly when the authors rate the answer 1
            options = e["question"].split("\n")[1:]
            item = {"captions": [o.partition(": ")[2] for o in options],
                    "provenance": [{"details": json.dumps({"question": e["question"]})}] * 2}
            choice = tempcompass.authors_match(e["video-llm-prediction"], item)
            assert (options[choice] == e["gt-answer"]) == bool(e["rating"]), (path.name, e)
        assert n and undecided < n


@pytest.fixture(scope="module")
def release_items(realdata):
    path = realdata / "tempcompass" / "caption_matching.json"
    items, _ = tempcompass.read_questions(path, None, None)
    return path, items


def _questions_in_order(path):
    return [q["question"] for aspects in json.loads(path.read_text()).values() for qs in aspects.values() for q in qs]


def test_the_question_is_the_authors_text_byte_for_byte(release_items):
    from hardneg.datasets.samples import sample_raw_dir

    path, items = release_items
    sample = sample_raw_dir("tempcompass") / "caption_matching.json"
    sample_items, _ = tempcompass.read_questions(sample, None, None)
    for p, its in ((path, items), (sample, sample_items)):
        want = _questions_in_order(p)
        assert len(want) == len(its) > 0
        for item, q in zip(its, want):
            got = tempcompass.authors_question({"captions": item["captions"], "provenance": item["provenance"]})
            assert got.encode() == q.encode()


@pytest.mark.parametrize("arch", ARCHS)
def test_the_model_reads_the_question_in_its_own_chat_template(arch, release_items):
    """What the model is given is the checkpoint's template around exactly (video, question + POST), as
    `processor.apply_chat_template` makes it for the authors' inference script."""
    m = load_model(arch, device="cpu")
    spec = benchmarks.get("tempcompass").vlm_for("authors")
    r = m.engine.render(spec)
    for item in release_items[1][:40]:
        q = tempcompass.authors_question(item)
        messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": q + POST}]}]
        want = m.engine.tok.apply_chat_template(messages, chat_template=m.engine.template, tokenize=False,
                                                add_generation_prompt=True)
        assert r.before_video + m.engine.video_token + r.head + q + r.tail == want


@pytest.mark.parametrize("arch", ARCHS)
def test_greedy_answers_from_the_cache_equal_a_full_forward_per_token(arch):
    from dataclasses import replace

    m = load_model(arch, device="cpu")
    spec = replace(benchmarks.get("tempcompass").vlm_for("authors"), max_new_tokens=10)
    frames = np.random.default_rng(2).integers(0, 256, (4, 40, 56, 3), dtype=np.uint8)
    q = "Which caption matches the video better?\nCaption A: a dog runs <|im_end|>\nCaption B: ünïcødé 猫 sits"
    times = np.arange(4) * 1.5
    cached = m.engine.generate(frames, spec, q, timestamps=times)
    assert cached == m.engine.generate(frames, spec, q, timestamps=times, naive=True)


def _item(question):
    options = question.split("\n")[1:]
    return {"captions": [o.partition(": ")[2] for o in options],
            "provenance": [{"details": json.dumps({"question": question})}] * 2}


def test_undecided_answers_tie_and_are_listed_and_a_judge_decides_them(monkeypatch):
    m = load_model("tiny-vlm", device="cpu")
    m.use_protocol(benchmarks.get("tempcompass"), protocol_set="authors")
    q = "Which caption matches the video better?\nCaption A: a dog runs\nCaption B: a cat sits"
    item = _item(q)
    clips = iter(np.full((2, 16, 16, 3), k, np.uint8) for k in range(4))  # four videos: four answers
    frames = np.zeros((2, 16, 16, 3), np.uint8)
    answers = iter(["Caption B", "I think it is the cat", "A, the dog", "no idea"])
    monkeypatch.setattr(m.engine, "generate", lambda *a, **k: next(answers))
    m.set_item(item)
    assert m._score(next(clips), item["captions"]).tolist() == [0.0, 1.0]
    assert m._score(next(clips), item["captions"]).tolist() == [0.0, 0.0]  # undecided: a tie, never a guess
    m.judge = lambda question, answer, captions: 0 if "A" in answer else None
    assert m._score(next(clips), item["captions"]).tolist() == [1.0, 0.0]
    assert m._score(next(clips), item["captions"]).tolist() == [0.0, 0.0]
    report = m.take_generation_report()
    assert (report["answers"], report["by_rule"], report["by_judge"], report["undecided"]) == (4, 1, 1, 2)
    assert [u["answer"] for u in report["undecided_items"]] == ["I think it is the cat", "no idea"]
    m.set_item(_item(q.replace("dog", "bird")))
    with pytest.raises(ValueError, match="needs the item"):
        m._score(frames, item["captions"])


def test_a_question_is_answered_once_per_video_and_protocol(monkeypatch):
    """TempCompass asks each question in `all` and in its aspect's config: the model generates once."""
    m = load_model("tiny-vlm", device="cpu")
    m.use_protocol(benchmarks.get("tempcompass"), protocol_set="authors")
    item = _item("Which caption matches the video better?\nCaption A: a dog runs\nCaption B: a cat sits")
    calls = []
    monkeypatch.setattr(m.engine, "generate", lambda *a, **k: calls.append(1) or "Caption A")
    m.set_item(item)
    frames = np.zeros((2, 16, 16, 3), np.uint8)
    for _ in range(3):
        assert m._score(frames, item["captions"]).tolist() == [1.0, 0.0]
    assert len(calls) == 1
    m._score(frames + 1, item["captions"])  # another video
    m.use_protocol(benchmarks.get("tempcompass"), protocol_set="lmms-eval")  # another protocol (system turn)
    m._score(frames, item["captions"])
    assert len(calls) == 3


def test_lmms_eval_vitatecs_question_and_rules():
    item = {"captions": ["a man opens the door", "a man closes the door"]}
    q = vitatecs.lmms_eval_question(item)
    assert q.startswith("Which of the following best describes the content of the video: \n(A) ")
    assert "A man opens the door." in q and "A man closes the door." in q
    right = "A" if q.index("opens") < q.index("closes") else "B"
    wrong = "B" if right == "A" else "A"
    assert vitatecs.lmms_eval_match(right, item) == 0 and vitatecs.lmms_eval_match(wrong + ".", item) == 1
    assert vitatecs.lmms_eval_match("I see: A man closes the door.", item) == 1
    # lmms-eval 0.7.3 reads the letter inside "(A)" (before 0.7 it compared the text after the ")")
    assert vitatecs.lmms_eval_match(f"({right}) whatever", item) == 0 and vitatecs.lmms_eval_match(f"({right})", item) == 0
    assert vitatecs.lmms_eval_match("both or neither", item) is None


def test_every_benchmark_has_a_protocol_in_every_set_with_its_source():
    for name in benchmarks.names():
        decl = benchmarks.get(name)
        for s in PROTOCOL_SETS:
            spec = decl.vlm_for(s)
            assert isinstance(spec, VLMPrompt) and spec.source
            if s != "default" and s not in dict(decl.vlm_sets):
                assert f"{name} declares no separate one; its default protocol ({decl.vlm.source})" in spec.source
    assert benchmarks.get("tempcompass").vlm_for("authors").protocol == "generate-match"
    assert "lmms-eval" in benchmarks.get("vitatecs").vlm_for("lmms-eval").source
    with pytest.raises(ValueError, match="unknown --protocol-set"):
        benchmarks.get("vilma").vlm_for("paper")


def test_prompts_per_benchmark():
    assert parse_prompts(None) is None
    assert parse_prompts(["{video}\n{caption}"]) == "{video}\n{caption}"
    got = parse_prompts(["tempcompass={video}\n{options}", "{video} x {caption}"])
    assert got == {"tempcompass": "{video}\n{options}", "*": "{video} x {caption}"}
    with pytest.raises(ValueError, match="no benchmark named 'nope'"):
        parse_prompts(["nope={video}{caption}"])
    m = load_model("tiny-vlm", device="cpu")
    assert m.use_protocol(benchmarks.get("tempcompass"), protocol="choice-letter",
                          prompt={"tempcompass": "{video}\nPick:\n{options}"}).prompt == "{video}\nPick:\n{options}"
    # a benchmark not named keeps its own prompt
    assert m.use_protocol(benchmarks.get("vilma"), prompt={"tempcompass": "{video}\n{options}"}) == \
        benchmarks.get("vilma").vlm
    with pytest.raises(ValueError, match="--protocol-set authors"):
        m.use_protocol(benchmarks.get("vilma"), protocol="generate-match")


@pytest.mark.slow
@pytest.mark.parametrize("protocol_set", ["authors", "lmms-eval"])
def test_a_run_with_a_protocol_set_names_each_protocols_source(tmp_path, protocol_set, monkeypatch):
    from hardneg.cli import main as hardneg_main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "R"
    assert hardneg_main(["run", "--model", "tiny-vlm", "--benchmarks", "tempcompass,vitatecs,vilma", "--out", str(out),
                         "--protocol-set", protocol_set, "--frames", "2", "--resamples", "0", "--no-charts",
                         "--no-progress", "--device", "cpu", "--cache-dir", str(tmp_path / "c")]) == 0
    results = json.loads((out / "results.json").read_text())
    for key, res in results.items():
        if "/" not in key:
            continue
        bench = key.split("/")[0]
        model = res["run"]["model"]
        # the set's source for the model's family (tiny-vlm is a Qwen2-VL: the authors' run_qwen2_vl.py)
        assert model["prompt_source"] == benchmarks.get(bench).vlm_for(protocol_set).for_model_type("qwen2_vl").source
        if bench == "tempcompass" or (bench == "vitatecs" and protocol_set == "lmms-eval"):
            assert model["protocol"] == "generate-match"
            gen = res["run"]["generation"]
            assert gen["answers"] == res["n"] and gen["undecided"] == len(gen["undecided_items"])


@pytest.mark.parametrize("arch", ["tiny-vlm", "tiny-vlm:llava-onevision"])
def test_vilmas_per_frame_perplexity(arch):
    """ViLMA's authors set: each frame scored alone, the summed log-likelihood over (tokens + 1), averaged over
    frames, exp, negated; recomputed here from the default protocol's mean log-probabilities of one-frame videos."""
    m = load_model(arch, device="cpu")
    spec = m.use_protocol(benchmarks.get("vilma"), protocol_set="authors")
    assert spec.normalize == "vilma-perplexity" and "perplexity" in m.identity()["score"]
    frames = np.random.default_rng(4).integers(0, 256, (3, 40, 56, 3), dtype=np.uint8)
    caps = ["a man opens the door", "the dog runs across the park"]
    got = m.score(frames, caps)
    np.testing.assert_allclose(got, m.score(frames, caps, naive=True), rtol=1e-4)
    plain = benchmarks.get("vilma").vlm
    per = []
    for t in range(3):
        one = frames[t:t + 1]
        means = m.engine.score(one, caps, plain, naive=True)
        video = m.engine.family.video_inputs(one, m.engine.dtype, "cpu")
        n = np.array([s.span[1] - s.span[0] for s in m.engine.sequences(plain, caps, video.n_tokens)])
        per.append(means * n / (n + 1))
    np.testing.assert_allclose(got, -np.exp(-np.mean(per, axis=0)), rtol=1e-5)
    m.use_protocol(benchmarks.get("vilma"))  # the default set: the mean log-probability of the whole video
    assert np.abs(got - m.score(frames, caps)).max() > 1e-3
