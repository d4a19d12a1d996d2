"""No silent skip: every file of --raw is listed as used or ignored, with the reason, in the report and the CLI."""

from __future__ import annotations

import json

import pytest

from hardneg.cli import main
from hardneg.datasets import build_benchmark


def mixed_posrank_folder(raw):
    """A misnamed release (MSR-VTT captions as .csv), a fused-name PoSRank file, an empty file and clutter."""
    (raw / "VLN-UVO").mkdir(parents=True)
    caps = {"vidA##*##0": "A person slowly lifts a cup", "vidB##*##1": "A man slowly opens the door"}
    (raw / "VLN-UVO" / "captions.txt").write_text("".join(f"{k}**#**{c}\n" for k, c in caps.items()))
    (raw / "VLN-UVO" / "uvo_val_adverb_RE20.json").write_text(
        json.dumps({k: {str(j): c.replace("slowly", f"w{j}") for j, _ in enumerate(range(20))} for k, c in caps.items()})
    )
    msr = {"video7010#0": "a man drives a car slowly", "video7011#2": "a cat sleeps slowly"}
    (raw / "msr1ka_adverb_RE20.json").write_text(json.dumps({k: {str(j): c.replace("slowly", f"w{j}") for j in range(20)} for k, c in msr.items()}))
    (raw / "msrvtt_test_captions.csv").write_text("".join(f"{k} {c}\n" for k, c in msr.items()))  # misnamed: not CSV at all
    (raw / "notes.txt").write_bytes(b"")  # empty, not a release name
    (raw / "README.md").write_text("my notes\n")
    (raw / ".DS_Store").write_bytes(b"\x00\x01")
    return raw


EXPECTED = {
    ".DS_Store": ("ignored", "hidden"),
    "README.md": ("ignored", "neither a caption file"),
    "VLN-UVO/captions.txt": ("used", "caption source"),
    "VLN-UVO/uvo_val_adverb_RE20.json": ("used", "VLN-UVO adv negatives"),
    "msr1ka_adverb_RE20.json": ("used", "MSR-VTT adv negatives"),
    "msrvtt_test_captions.csv": ("used", "'<video>#<i> <caption>' lines"),
    "notes.txt": ("ignored", "empty (0 bytes)"),
}


def test_report_lists_every_file_with_what_happened_to_it(tmp_path, capsys):
    raw = mixed_posrank_folder(tmp_path / "raw")
    assert main(["build", "posrank", "--raw", str(raw), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "out" / "build_report.json").read_text())
    files = {e["path"]: e for e in report["files"]}
    assert set(files) == set(EXPECTED), "every file and only the files of --raw"
    for path, (status, fragment) in EXPECTED.items():
        assert files[path]["status"] == status, path
        assert fragment in files[path]["reason"], (path, files[path]["reason"])
        assert f"{status:<8} {path}: " in printed, path
    assert "files in" in printed and "5 used, 3 ignored" not in printed  # counts match the list below
    assert f"{sum(s == 'used' for s, _ in EXPECTED.values())} used, {sum(s == 'ignored' for s, _ in EXPECTED.values())} ignored" in printed
    assert report["caption_sources"]["msrvtt/adv"] == "msrvtt_test_captions.csv"


def test_strict_turns_every_ignored_file_into_one_error(tmp_path, capsys):
    raw = mixed_posrank_folder(tmp_path / "raw")
    assert main(["build", "posrank", "--raw", str(raw), "--out", str(tmp_path / "out"), "--strict"]) == 2
    err = capsys.readouterr().err
    assert "--strict" in err and "Traceback" not in err
    for path, (status, _) in EXPECTED.items():
        assert (path in err) == (status == "ignored"), path
    assert not (tmp_path / "out").exists()
    for clutter in (".DS_Store", "README.md", "notes.txt"):
        (raw / clutter).unlink()
    assert main(["build", "posrank", "--raw", str(raw), "--out", str(tmp_path / "out"), "--strict"]) == 0


def test_empty_release_files_are_reported_together(tmp_path):
    raw = mixed_posrank_folder(tmp_path / "raw")
    for name in ("uvo_val_noun_RE20.json", "msr1ka_verb_RE20.json", "vatex1k5_adjective_RE20.json"):
        (raw / name).write_bytes(b"")
    with pytest.raises(ValueError) as info:
        build_benchmark("posrank", raw, tmp_path / "out")
    message = str(info.value)
    assert "3 empty (0-byte) files" in message
    for name in ("uvo_val_noun_RE20.json", "msr1ka_verb_RE20.json", "vatex1k5_adjective_RE20.json"):
        assert name in message
    assert "notes.txt" not in message  # an empty file with another name is only listed as ignored


@pytest.mark.parametrize("name", ["feint6k", "contrast_sets", "posrank", "fire"])
def test_samples_list_every_file(name, tmp_path):
    from hardneg.datasets import sample_raw_dir

    raw = sample_raw_dir(name)
    result = build_benchmark(name, raw, tmp_path / "out")
    listed = {e["path"] for e in result.report["files"]}
    on_disk = {p.relative_to(raw).as_posix() for p in raw.rglob("*") if p.is_file()}
    assert listed == on_disk
    assert all(e["reason"] for e in result.report["files"])
    assert {e["path"] for e in result.report["files"] if e["status"] == "used"} == set(result.report["raw_files"])
    assert {e["path"] for e in result.report["files"] if e["status"] == "ignored"} == {"videos.txt"}


def test_contrast_release_named_csv_and_clutter(tmp_path, rawfmt):
    raw = tmp_path / "raw"
    rawfmt.write_tsv(raw / "msrvtt_human_contrast_set_with_c_label.csv", rawfmt.CS_HEADER + ["c_label"], rawfmt.contrast_rows(4, True))
    rawfmt.write_tsv(raw / "msrvtt_lm_contrast_set.tsv", rawfmt.CS_HEADER, rawfmt.contrast_rows(4, False))
    (raw / "download.log").write_text("fetched 2 files\n")
    result = build_benchmark("contrast_sets", raw, tmp_path / "out")
    files = {e["path"]: e for e in result.report["files"]}
    assert files["msrvtt_human_contrast_set_with_c_label.csv"]["status"] == "used"
    assert "read as tab-separated by its header, although named .csv" in files["msrvtt_human_contrast_set_with_c_label.csv"]["reason"]
    assert files["download.log"]["status"] == "ignored"
    assert result.report["manipulated_index"]["verb_human"] and result.report["c_label_absent"] == ["verb_lm"]


def test_feint6k_and_fire_recognize_releases_by_header(tmp_path, rawfmt):
    raw = tmp_path / "f6"
    rawfmt.write_csv(raw / "msrvtt_counterfactuals.txt", ["video_id", "sentence"], rawfmt.feint6k_rows(2), delimiter="\t")
    result = build_benchmark("feint6k", raw, tmp_path / "out")
    (entry,) = result.report["files"]
    assert entry["status"] == "used" and "Feint6K msrvtt" in entry["reason"] and "tab-separated" in entry["reason"]

    raw = tmp_path / "fire"
    rows = [rawfmt.fire_row("MSVD", "a cat", "-4wsuPCjDBc_5_15", ["relevant"])]
    rawfmt.fire_release(raw, rows, [], {})
    (raw / "fire.json").rename(raw / "release_v2.json")
    rawfmt.write_csv(raw / "test_captions.tsv", ["video_id", "sentence"], [("-4wsuPCjDBc_5_15", "a cat")], delimiter="\t")
    result = build_benchmark("fire", raw, tmp_path / "out2")
    files = {e["path"]: e for e in result.report["files"]}
    assert files["release_v2.json"]["status"] == "used"
    assert files["test_captions.tsv"]["status"] == "used" and "msvd queries" in files["test_captions.tsv"]["reason"]


def test_linked_and_hidden_folders_are_listed_not_searched(tmp_path, rawfmt):
    raw = tmp_path / "raw"
    rawfmt.write_csv(raw / "feint6k_msrvtt.csv", ["video_id", "sentence"], rawfmt.feint6k_rows(1))
    (tmp_path / "elsewhere").mkdir()
    rawfmt.write_csv(tmp_path / "elsewhere" / "feint6k_vatex.csv", ["video_id", "sentence"], rawfmt.feint6k_rows(1, prefix="x"))
    (raw / "more").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (raw / ".git").mkdir()
    (raw / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    result = build_benchmark("feint6k", raw, tmp_path / "out")
    files = {e["path"]: e for e in result.report["files"]}
    assert files["more/"]["status"] == "ignored" and "link to a folder" in files["more/"]["reason"]
    assert files[".git/"]["status"] == "ignored" and set(files) == {"feint6k_msrvtt.csv", "more/", ".git/"}
