"""Every PoSRank release file builds under the authors' own name, joined to the caption source it needs.

The layout is the authors' `Datasets/HardNegatives/` (github.com/JewelChen2019/Fine-grained-negatives):
`VLN-UVO/uvo_val_<pos>_RE20.json` + `captions.txt`, `VLN-OOPS/oops_val_<pos>_RE20.json` + `captions.txt`,
`MSR-VTT/msr1ka_<pos>_RE20.json` (keys `video123#4`) and `VATEX/vatex1k5_<pos>_RE20.json` (keys
`<youtube id>_<start>_<end>#4`), with the MSR-VTT and VATEX captions that their test scripts read.
Captions and negatives here are invented, in those exact formats.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hardneg.cli import main
from hardneg.datasets import RawFormatError, build_benchmark


def negatives_for(captions: dict[str, str], word: str, n: int = 20) -> dict:
    return {key: {str(j): cap.replace(word, f"{word[:2]}x{j}") for j in range(n)} for key, cap in captions.items()}


UVO = {"--7qK_w-g3Y##*##0": "A person slowly lifts a white cup", "-WZgMWx8Elk##*##1": "A man slowly walks toward the door"}
OOPS = {"Fall_34##*##0": "A boy quickly jumps over a fence", "Fall_35##*##2": "A girl quickly rides a bike"}
MSR = {"video7010#0": "a man is driving a car slowly", "video7010#3": "a woman slowly cooks pasta", "video8001#1": "a dog slowly runs in a park"}
VATEX = {"Ptf_2VRj-V0_000122_000132#0": "A man is playing a guitar on a stage.", "Ptf_2VRj-V0_000122_000132#4": "Someone plays the guitar loudly."}


def write_layout(root: Path, msr_source: str = "visualsearch", vatex_source: str = "visualsearch") -> Path:
    """The authors' folder layout with every dataset and the caption sources their scripts read."""
    uvo, oops, msr, vatex = (root / d for d in ("VLN-UVO", "VLN-OOPS", "MSR-VTT", "VATEX"))
    for d in (uvo, oops, msr, vatex):
        d.mkdir(parents=True)
    (uvo / "captions.txt").write_text("".join(f"{k}**#**{c}\n" for k, c in UVO.items()) + "zzz##*##0**#**unused caption\n", encoding="utf-8")
    (uvo / "uvo_val_adverb_RE20.json").write_text(json.dumps(negatives_for(UVO, "slowly")))
    (uvo / "vln_uvo_word_dic_20230920.json").write_text(json.dumps({"noun": ["cup"], "verb": ["lift"], "adv": ["slowly"]}))
    (uvo / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (oops / "captions.txt").write_text("".join(f"{k}**#**{c}\n" for k, c in OOPS.items()), encoding="utf-8")
    (oops / "oops_val_adverb_RE20.json").write_text(json.dumps(negatives_for(OOPS, "quickly")))
    (msr / "msr1ka_adverb_RE20.json").write_text(json.dumps(negatives_for(MSR, "slowly")))
    (msr / "msr1ka_noun_RE20.json").write_text(json.dumps({k: {str(j): c.replace("a ", f"n{j} ", 1) for j in range(20)} for k, c in MSR.items()}))
    (msr / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    if msr_source == "visualsearch":  # msrvtt10ktest.caption.txt: '<video>#<i> <caption>'
        (msr / "msrvtt10ktest.caption.txt").write_text("".join(f"{k} {c}\n" for k, c in MSR.items()) + "video9999#0 another caption\n")
    elif msr_source == "json":  # the MSR-VTT annotations: caption i of a video is its i-th sentence in file order
        sentences = []
        for video, n in (("video7010", 4), ("video8001", 2)):
            for i in range(n):
                sentences.append({"video_id": video, "caption": MSR.get(f"{video}#{i}", f"filler {video} {i}"), "sen_id": len(sentences)})
        (root / "test_videodatainfo.json").write_text(json.dumps({"info": {}, "videos": [], "sentences": sentences}))
    (vatex / "vatex1k5_adverb_RE20.json").write_text(json.dumps({k: {str(j): c.replace("guitar", f"g{j}") for j in range(20)} for k, c in VATEX.items()}))
    if vatex_source == "visualsearch":  # vatex_test1k5_enc.txt: '<video>#enc#<i> <caption>'
        (vatex / "vatex_test1k5_enc.txt").write_text("".join(f"{k.replace('#', '#enc#')} {c}\n" for k, c in VATEX.items()))
    elif vatex_source == "json":  # the VATEX release: [{"videoID", "enCap": [10 captions], "chCap"}]
        caps = [VATEX.get(f"Ptf_2VRj-V0_000122_000132#{i}", f"filler {i}") for i in range(10)]
        (vatex / "vatex_validation_v1.0.json").write_text(json.dumps([{"videoID": "Ptf_2VRj-V0_000122_000132", "enCap": caps, "chCap": ["x"] * 10}]))
    return root


def _check_positives(result, expected: dict[str, dict[str, str]]) -> None:
    for config, captions in expected.items():
        table = result.build.configs[[c.name for c in result.build.configs].index(config)].splits["test"].to_pylist()
        got = {it["id"].split(":", 2)[2]: it["captions"][0] for it in table if it["category"] == "adv"}
        assert got == {k.replace("##*##", "#"): c for k, c in captions.items()}, config  # ids are <config>:<pos>:<video>#<i>


@pytest.mark.parametrize("msr_source,vatex_source", [("visualsearch", "visualsearch"), ("json", "json")])
def test_every_dataset_builds_under_its_own_file_name(tmp_path, msr_source, vatex_source):
    raw = write_layout(tmp_path / "HardNegatives", msr_source, vatex_source)
    result = build_benchmark("posrank", raw, tmp_path / "out")
    assert sorted(result.report["counts"]) == ["msrvtt", "vatex", "vln_oops", "vln_uvo"]
    assert result.report["captions_joined"] == {
        "msrvtt/adv": 3, "msrvtt/noun": 3, "vatex/adv": 2, "vln_oops/adv": 2, "vln_uvo/adv": 2,
    }
    _check_positives(result, {"vln_uvo": UVO, "vln_oops": OOPS, "msrvtt": MSR, "vatex": VATEX})
    splits = {c.name: set(c.splits["test"].column("source_split").to_pylist()) for c in result.build.configs}
    assert splits == {"msrvtt": {"test-1k-A"}, "vatex": {"test-1k5"}, "vln_oops": {"val"}, "vln_uvo": {"val"}}
    sources = result.report["caption_sources"]
    assert sources["vln_uvo/adv"] == "VLN-UVO/captions.txt" and sources["vln_oops/adv"] == "VLN-OOPS/captions.txt"
    assert sources["msrvtt/adv"] == ("MSR-VTT/msrvtt10ktest.caption.txt" if msr_source == "visualsearch" else "test_videodatainfo.json")
    assert sources["vatex/adv"] == ("VATEX/vatex_test1k5_enc.txt" if vatex_source == "visualsearch" else "VATEX/vatex_validation_v1.0.json")
    files = {e["path"]: e for e in result.report["files"]}
    assert files["VLN-UVO/.DS_Store"]["status"] == "ignored" and "hidden" in files["VLN-UVO/.DS_Store"]["reason"]
    assert files["VLN-UVO/vln_uvo_word_dic_20230920.json"]["status"] == "ignored"
    assert "vocabulary" in files["VLN-UVO/vln_uvo_word_dic_20230920.json"]["reason"]
    used = {p for p, e in files.items() if e["status"] == "used"}
    assert {"MSR-VTT/msr1ka_adverb_RE20.json", "MSR-VTT/msr1ka_noun_RE20.json", "VATEX/vatex1k5_adverb_RE20.json",
            "VLN-OOPS/oops_val_adverb_RE20.json", "VLN-UVO/uvo_val_adverb_RE20.json"} <= used
    assert set(result.report["raw_files"]) == used


@pytest.mark.parametrize(
    "dataset,fragments",
    [
        ("MSR-VTT", ["msr1ka_adverb_RE20.json", "msrvtt10ktest.caption.txt", "test_videodatainfo.json", "https://github.com/ArrowLuo/CLIP4Clip/releases/download/v0.0/msrvtt_data.zip"]),
        ("VATEX", ["vatex1k5_adverb_RE20.json", "vatex_test1k5_enc.txt", "vatex_validation_v1.0.json", "https://eric-xw.github.io/vatex-website/download.html"]),
        ("VLN-UVO", ["uvo_val_adverb_RE20.json", "captions.txt", "github.com/JewelChen2019/Fine-grained-negatives"]),
        ("VLN-OOPS", ["oops_val_adverb_RE20.json", "captions.txt", "video-localized-narratives"]),
    ],
)
def test_missing_caption_source_names_the_file_to_download_and_where(tmp_path, dataset, fragments):
    raw = write_layout(tmp_path / "HardNegatives", msr_source="none", vatex_source="none")
    for other in ("VLN-UVO", "VLN-OOPS", "MSR-VTT", "VATEX"):
        if other != dataset:
            shutil.rmtree(raw / other)
    if dataset.startswith("VLN"):
        (raw / dataset / "captions.txt").unlink()
    with pytest.raises(FileNotFoundError) as info:
        build_benchmark("posrank", raw, tmp_path / "out")
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert not (tmp_path / "out").exists()


def test_flat_folder_with_one_captions_file_for_two_vln_datasets_names_the_missing_one(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "captions.txt").write_text("".join(f"{k}**#**{c}\n" for k, c in UVO.items()))
    (raw / "uvo_val_adverb_RE20.json").write_text(json.dumps(negatives_for(UVO, "slowly")))
    (raw / "oops_val_adverb_RE20.json").write_text(json.dumps(negatives_for(OOPS, "quickly")))
    with pytest.raises(RawFormatError) as info:
        build_benchmark("posrank", raw, tmp_path / "out")
    message = str(info.value)
    assert "oops_val_adverb_RE20.json" in message and "Fall_34##*##0" in message and "not in captions.txt" in message
    assert "VLN-OOPS" in message and "oops_captions.txt" in message
    # with VLN-OOPS's captions under the documented flat name, both build
    (raw / "oops_captions.txt").write_text("".join(f"{k}**#**{c}\n" for k, c in OOPS.items()))
    result = build_benchmark("posrank", raw, tmp_path / "out")
    assert result.report["caption_sources"] == {"vln_oops/adv": "oops_captions.txt", "vln_uvo/adv": "captions.txt"}


def test_caption_source_of_another_order_is_refused_not_joined(tmp_path):
    """Positives that do not resemble their negatives mean the wrong captions file: an error, not a build."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shuffled = dict(zip(MSR, reversed(list(MSR.values()))))
    (raw / "msrvtt10ktest.caption.txt").write_text("".join(f"{k} {c}\n" for k, c in shuffled.items()))
    (raw / "msr1ka_adverb_RE20.json").write_text(json.dumps(negatives_for(MSR, "slowly")))
    with pytest.raises(RawFormatError, match="do not resemble their negatives"):
        build_benchmark("posrank", raw, tmp_path / "out")


def test_older_change_names_and_phrase_level_files(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "msrvtt10ktest.caption.txt").write_text("".join(f"{k} {c}\n" for k, c in MSR.items()))
    (raw / "msr1ka_ChangeADP_RE20_20230925.json").write_text(json.dumps({k: {str(j): c.replace(" in ", f" p{j} ") for j in range(20)} for k, c in MSR.items()}))
    (raw / "msr1ka_ChangeVP_RE20_20230925.json").write_text(json.dumps(negatives_for(MSR, "slowly")))
    result = build_benchmark("posrank", raw, tmp_path / "out")
    assert result.report["captions_joined"] == {"msrvtt/prep": 3}
    files = {e["path"]: e for e in result.report["files"]}
    assert files["msr1ka_ChangeVP_RE20_20230925.json"]["status"] == "ignored"
    assert "verb phrase" in files["msr1ka_ChangeVP_RE20_20230925.json"]["reason"]
    with pytest.raises(ValueError, match="--strict.*msr1ka_ChangeVP_RE20_20230925.json"):
        build_benchmark("posrank", raw, tmp_path / "out2", strict=True)


def test_cli_builds_the_authors_layout_and_lists_every_file(tmp_path, capsys):
    raw = write_layout(tmp_path / "HardNegatives")
    assert main(["build", "posrank", "--raw", str(raw), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    for path in ("VLN-UVO/uvo_val_adverb_RE20.json", "MSR-VTT/msr1ka_adverb_RE20.json", "VATEX/vatex1k5_adverb_RE20.json",
                 "VLN-OOPS/oops_val_adverb_RE20.json", "VLN-UVO/vln_uvo_word_dic_20230920.json", "MSR-VTT/.DS_Store"):
        assert path in out, path
    assert "ignored  VLN-UVO/vln_uvo_word_dic_20230920.json" in out
