"""TempCompass caption matching: the declaration (non-commercial license), the parser's validation, the
sample, the judged-answers importer and the authors' numbers from their released results."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hardneg import benchmarks
from hardneg.benchmarks.tempcompass import ASPECTS
from hardneg.cli import main
from hardneg.datasets import build_benchmark
from hardneg.datasets.raw_common import RawFormatError
from hardneg.datasets.samples import sample_raw_dir, sample_video_ids
from hardneg.evaluation import evaluate_predictions
from hardneg.items import load_items
from hardneg.results import chance_result

NAME = "tempcompass"
SAMPLE = sample_raw_dir(NAME)
QUESTIONS = "caption_matching.json"
JUDGED = "auto_eval_results_toy-model_caption_matching.json"


def print_result(results: dict) -> dict[str, float]:
    """utils/eval_utils.py print_result(), written again: ratings summed per aspect and over all questions."""
    got, n = Counter(), Counter()
    for aspects in results.values():
        for aspect, entries in aspects.items():
            for e in entries:
                got[aspect] += e["rating"]
                n[aspect] += 1
    out = {a: got[a] / n[a] for a in n}
    out["avg"] = sum(got.values()) / sum(n.values())
    return out


@pytest.fixture
def raw(tmp_path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "raw"))


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


# ----------------------------------------------------------------------------- declaration


def test_declared_once_non_commercial_license_everywhere_it_is_read(tmp_path):
    decl = benchmarks.get(NAME)
    assert decl.task == "multiple_choice" and decl.headline == ["Accuracy"] and decl.metric("Accuracy").over is None
    assert decl.licenses == ("cc-by-nc-4.0",) and "NON-COMMERCIAL" in decl.license_note
    assert "non-commercial" in decl.description.lower() and decl.summary()["license"] == ["cc-by-nc-4.0"]
    assert decl.score_importer().name == "tempcompass-judged-json"
    card = (build_benchmark(NAME, SAMPLE, tmp_path / "out").out / "README.md").read_text()
    assert "license: cc-by-nc-4.0" in card and "NON-COMMERCIAL" in card and "liu2024tempcompass" in card


# ----------------------------------------------------------------------------- the sample


def test_sample_builds_with_hand_checked_items(tmp_path):
    result = build_benchmark(NAME, SAMPLE, tmp_path / "out")
    assert result.report["counts"] == {"all": {"test": 8}, "action": {"test": 2}, "direction": {"test": 2},
                                       "speed": {"test": 1}, "order": {"test": 1}, "attribute_change": {"test": 2}}
    items = load_items(str(result.out), "all")
    assert items.ids.tolist()[:3] == ["9000000001:action:0", "9000000001:action:1", "9000000001:direction:0"]
    # "Option 1: A woman is kneading dough. / Option 2: A woman is slicing bread.", answer "Option 1: ..."
    assert items.captions[0] == ["A woman is kneading dough.", "A woman is slicing bread."] and items.label[0] == 0
    # "Sentence A: ... left to right. / Sentence B: ... right to left.", answer "Sentence B: ..."
    assert items.captions[3] == ["The camera pans from left to right.", "The camera pans from right to left."]
    assert items.label[3] == 1 and items.clusters[3] == "9000000001_reverse"
    assert items.negative_types[3] == ["temporal", "positive"]
    assert result.report["per_fine_grained_aspect"]["camera motion"] == 2
    assert sorted(sample_video_ids(NAME)) == sorted(set(items.clusters.tolist()))
    status = {e["path"]: e["status"] for e in result.report["files"]}
    assert status == {QUESTIONS: "used", "meta_info.json": "used", JUDGED: "ignored", "videos.txt": "ignored"}
    assert chance_result(items, n_resamples=0).value("Accuracy") == 0.5


def test_judged_answers_import_to_the_authors_accuracy(tmp_path, capsys):
    out = build_benchmark(NAME, SAMPLE, tmp_path / "out").out
    want = print_result(json.loads((SAMPLE / JUDGED).read_text()))
    assert want["avg"] == pytest.approx(5 / 8)  # by hand: ratings 1,1,0,1,0,1,1,0
    pred = tmp_path / "p.parquet"
    assert main(["import-scores", NAME, str(SAMPLE / JUDGED), "--data", str(out), "--model-id", "toy/model",
                 "--out", str(pred)]) == 0
    res = evaluate_predictions(pred, dataset=str(out), ties="original", n_resamples=0)
    assert res["metrics"]["Accuracy"]["value"] == pytest.approx(want["avg"]) and res["tie_rate"] == 0
    for aspect in ASPECTS:
        assert res["breakdowns"]["category"][aspect]["Accuracy"]["value"] == pytest.approx(want[aspect])
    assert res["original_rule"]["tie_aware"]["Accuracy"] == res["metrics"]["Accuracy"]["value"]
    # one aspect's config: the other aspects' rows are counted, not mismatches
    capsys.readouterr()
    one = tmp_path / "direction.parquet"
    assert main(["import-scores", NAME, str(SAMPLE / JUDGED), "--data", str(out), "--model-id", "toy/model",
                 "--out", str(one), "--config", "direction"]) == 0
    assert "6 rows belong to other configs" in capsys.readouterr().out
    res = evaluate_predictions(one, dataset=str(out), n_resamples=0)
    assert res["metrics"]["Accuracy"]["value"] == pytest.approx(want["direction"])


def test_a_bad_rating_is_an_error(tmp_path, capsys):
    out = build_benchmark(NAME, SAMPLE, tmp_path / "out").out
    bad = tmp_path / "judged.json"
    bad.write_text((SAMPLE / JUDGED).read_text())
    edit(bad, lambda d: d["9000000002"]["speed"][0].update(rating=0.5))
    assert main(["import-scores", NAME, str(bad), "--data", str(out), "--model-id", "toy/model",
                 "--out", str(tmp_path / "p.parquet")]) == 2
    err = capsys.readouterr().err
    assert "9000000002.speed[0]" in err and "rating is 0.5, not 0 or 1" in err
    assert not (tmp_path / "p.parquet").exists()


# ----------------------------------------------------------------------------- validation


def _q(data, video="9000000001", aspect="action", i=0):
    return data[video][aspect][i]


@pytest.mark.parametrize("change,words", [
    (lambda d: _q(d).update(answer="Option 3: A man is running."), ["9000000001.action[0]", "matches neither option"]),
    (lambda d: _q(d).update(answer="A woman is kneading dough."), ["matches neither option"]),
    (lambda d: _q(d).update(question="Which fits?\nOption 1: a\nOption 2: b\nOption 3: c"), ["two option lines"]),
    (lambda d: _q(d).update(question="Which fits?\nOption 1 - a\nOption 2: b"), ["two option lines"]),
    (lambda d: _q(d).update(question="Which fits?\nOption 1: same\nOption 2: same", answer="Option 1: same"),
     ["both options are 'same'"]),
    (lambda d: _q(d).update(score=1), ["not an object with exactly 'question' and 'answer'"]),
    (lambda d: d["9000000002"].update(colour=[]), ["unknown aspect 'colour'"]),
    (lambda d: d.update({"90/01": {}}), ["video id '90/01'"]),
])
def test_malformed_questions_are_errors_naming_file_entry_and_fix(raw, tmp_path, change, words):
    edit(raw / QUESTIONS, change)
    with pytest.raises(RawFormatError) as err:
        build_benchmark(NAME, raw, tmp_path / "out")
    message = str(err.value)
    assert QUESTIONS in message and "Fix:" in message
    for w in words:
        assert w in message
    assert not (tmp_path / "out").exists()


def test_duplicate_video_id_and_missing_meta_info_are_errors(raw, tmp_path):
    text = (raw / QUESTIONS).read_text()
    first = text.index('"9000000001": ')
    (raw / QUESTIONS).write_text(text[:-2] + ",\n" + text[first:text.index('"9000000001_reverse"')].rstrip().rstrip(",")
                                 + "\n}")
    with pytest.raises(RawFormatError, match="9000000001"):
        build_benchmark(NAME, raw, tmp_path / "out")
    shutil.copy(SAMPLE / QUESTIONS, raw / QUESTIONS)
    edit(raw / "meta_info.json", lambda d: d.pop("9000000002"))
    with pytest.raises(RawFormatError, match=r"meta_info.json.*video '9000000002' has no eval_dim.speed.type"):
        build_benchmark(NAME, raw, tmp_path / "out")
    (raw / "meta_info.json").unlink()  # optional: without it, no fine-grained aspects
    result = build_benchmark(NAME, raw, tmp_path / "out")
    assert result.report["per_fine_grained_aspect"] == {}


# ----------------------------------------------------------------------------- the real release


@pytest.mark.realdata
@pytest.mark.parametrize("model,overall", [("gemini", 77.45), ("reka-core-20240501", 74.05)])
def test_real_release_counts_and_the_authors_numbers(realdata, tmp_path, capsys, model, overall):
    raw = realdata / "tempcompass"
    result = build_benchmark(NAME, raw, tmp_path / "tc")
    counts = result.report["counts"]
    assert counts["all"] == {"test": 1503} and result.report["videos"] == 410
    assert {a: counts[a]["test"] for a in ASPECTS} == {"action": 297, "direction": 327, "speed": 291, "order": 300,
                                                       "attribute_change": 288}
    judged_file = raw / f"auto_eval_results_{model}_caption_matching.json"
    want = print_result(json.loads(judged_file.read_text()))
    assert round(100 * want["avg"], 2) == overall
    pred = tmp_path / f"{model}.parquet"
    assert main(["import-scores", NAME, str(judged_file), "--data", str(result.out), "--model-id",
                 f"tempcompass/{model}", "--out", str(pred)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(pred), "--ties", "original", "--resamples", "0"]) == 0
    printed = capsys.readouterr().out
    assert f"Accuracy                                 {overall:.2f}" in printed
    res = json.loads(pred.with_suffix(".metrics.json").read_text())
    for aspect in ASPECTS:
        value = res["breakdowns"]["category"][aspect]["Accuracy"]["value"]
        assert value == pytest.approx(want[aspect])
        assert f"Accuracy category={aspect}" in printed
    meta = json.loads(pq.read_schema(pred).metadata[b"hardneg"])
    assert meta["imported_from"]["file"] == judged_file.name and meta["imported_from"]["rows_read"] == 1503


def _authors_accuracy(entries: list[dict]) -> float:
    """eval_caption_matching.py's overall accuracy from its own output: the released ratings (print_result)."""
    return 100 * sum(e["rating"] for e in entries) / len(entries)


#: the authors' released answer files: two in ../shared/realdata/tempcompass; Video-LLaVA's
#: (llyx97/TempCompass, auto_eval_results/video-llava/caption_matching.json) is used where it was put beside them
#: under the same naming, and the case skips otherwise
@pytest.mark.realdata
@pytest.mark.parametrize("model,judged,disable_llm", [("gemini", 77.45, 77.31), ("reka-core-20240501", 74.05, 41.32),
                                                      ("video-llava", 63.34, 63.27)])
def test_answers_matched_again_print_the_authors_accuracy_with_their_judge_and_with_disable_llm(
        realdata, tmp_path, capsys, model, judged, disable_llm):
    """The released answers matched again by our implementation of the authors' rule: with the file's ratings as the
    judge of the undecided answers the authors' own overall accuracy comes back (the reference: the ratings in their
    output file), and without a judge the figure their eval_caption_matching.py prints with --disable_llm (each
    answer stripped first, as their main does: 136 Gemini answers end in whitespace; Reka: 651 answers their rule
    cannot decide). Those figures were printed by the authors' script, run unmodified on these files (issue 48's
    review): 77.31, 41.32, 63.27; no code of theirs is copied here."""
    raw = realdata / "tempcompass"
    judged_file = raw / f"auto_eval_results_{model}_caption_matching.json"
    if not judged_file.is_file():
        pytest.skip(f"{judged_file.name} is not in {raw} (it is in llyx97/TempCompass, auto_eval_results/{model})")
    built = build_benchmark(NAME, raw, tmp_path / "tc").out
    entries = [e for aspects in json.loads(judged_file.read_text()).values() for es in aspects.values() for e in es]
    assert round(_authors_accuracy(entries), 2) == judged
    for fmt, want in (("tempcompass-answers-judged", judged), ("tempcompass-answers-disable-llm", disable_llm)):
        pred = tmp_path / f"{model}-{fmt}.parquet"
        assert main(["import-scores", NAME, str(judged_file), "--data", str(built), "--model-id",
                     f"tempcompass/{model}", "--out", str(pred), "--format", fmt]) == 0
        capsys.readouterr()
        assert main(["evaluate", str(pred), "--ties", "original", "--resamples", "0"]) == 0
        assert f"Accuracy                                 {want:.2f}" in capsys.readouterr().out, fmt


@pytest.mark.realdata
@pytest.mark.parametrize("model", ["gemini", "reka-core-20240501"])
def test_our_rule_decides_every_released_answer_as_the_authors_did(realdata, model):
    """match_success and rating of every released answer (1,503 per file) equal our authors' rule on the stored
    prediction (the text their rule saw): the file is the authors' eval_caption_matching.py output, an independent
    reference. The current main's clean-up changes no Reka answer and 136 Gemini answers (trailing
    whitespace: that file was written before main stripped)."""
    from hardneg.benchmarks.tempcompass import clean_answer, eval_rule_rating

    judged_file = realdata / "tempcompass" / f"auto_eval_results_{model}_caption_matching.json"
    entries = [e for aspects in json.loads(judged_file.read_text()).values() for es in aspects.values() for e in es]
    assert len(entries) == 1503
    for e in entries:
        pred = e["video-llm-prediction"]
        got = eval_rule_rating(pred, e["question"], e["gt-answer"])
        assert (got is not None) == e["match_success"], pred
        if got is not None:
            assert got == e["rating"], pred
    changed = sum(isinstance(e["video-llm-prediction"], str) and clean_answer(e["video-llm-prediction"])
                  != e["video-llm-prediction"] for e in entries)
    assert changed == {"gemini": 136, "reka-core-20240501": 0}[model]
