"""Every declaration's pinned source against the real release files of ../shared/realdata: the dry run prints, for
each benchmark with files there, sha256 values equal to those files' own; every benchmark names its video source
or the reason there is none; and a release whose pinned files are all there fetches and builds from the stand-in
with the real parser (issue 47)."""

from __future__ import annotations

import hashlib

import pytest

from hardneg import benchmarks
from hardneg.cli import main

#: benchmark -> its folder of ../shared/realdata (the folder names are realdata's own, README there)
REALDATA_FOLDER = {"tempcompass": "tempcompass", "vitatecs": "vitatecs", "vilma": "vilma",
                   "contrast_sets": "contrast_sets", "posrank": "posrank_uvo", "videocon-ssv2": "videocon",
                   "videocon-atphard": "videocon"}


@pytest.mark.parametrize("name", sorted(REALDATA_FOLDER))
def test_dry_run_hashes_equal_the_real_files(realdata, name, capsys):
    decl = benchmarks.get(name)
    assert decl.source is not None, f"{name} has files in ../shared/realdata but no pinned source"
    assert main(["fetch", name, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert decl.source.commit in out
    matched = 0
    for f in decl.source.files:
        real = realdata / REALDATA_FOLDER[name] / f.raw_name
        if not real.is_file():
            continue
        data = real.read_bytes()
        assert f.sha256 == hashlib.sha256(data).hexdigest(), f"{name}: {f.path} pinned hash differs from {real}"
        assert f.size == len(data)
        assert f"sha256 {f.sha256}" in out and f.url in out
        matched += 1
    assert matched >= 1, f"{name}: no pinned file is one of {REALDATA_FOLDER[name]}/'s"


@pytest.mark.parametrize("name", benchmarks.names())
def test_every_benchmark_names_its_video_source_or_why_not(name, capsys):
    decl = benchmarks.get(name)
    code = main(["fetch", name, "--dry-run"])
    out, err = capsys.readouterr()
    if decl.source is None:
        assert code == 2 and "declares no pinned source: there is nothing to download" in err
        return
    assert code == 0
    parts = decl.source.video_parts
    if not parts:
        assert "videos: none fetched: no video source pinned in this version" in out
    for v in parts:
        part = f" ({v.part})" if v.part else ""
        if v.kind == "hub":
            assert f"videos{part}: Hub {v.repo_type} {v.repo_id} @ {v.revision}" in out
        else:
            assert f"videos{part}: none fetched: {v.why}\n    official source: {v.official}" in out
            assert all(step in out for step in v.steps)


@pytest.mark.parametrize("name", ["vitatecs", "videocon-ssv2", "videocon-atphard"])
def test_a_release_fetches_and_builds_from_the_stand_in(realdata, name, tmp_path, monkeypatch, capsys):
    from standins import StandIn

    decl = benchmarks.get(name)
    monkeypatch.setenv("HARDNEG_CACHE", str(tmp_path / "cache"))
    with StandIn() as standin:
        standin.serve_release(decl.source, realdata / REALDATA_FOLDER[name])
        assert main(["fetch", name, "--mirror", standin.url, "--no-progress", "--no-videos"]) == 0
    out = capsys.readouterr().out
    assert f"release {decl.source.repo} @ {decl.source.commit[:12]}" in out
    assert (tmp_path / "cache" / "fetch" / "built" / name / "README.md").is_file()


def test_leaderboard_about_names_each_benchmarks_release_commit():
    from hardneg.leaderboard.about import about_markdown

    text = about_markdown(benchmarks.names())
    for name, decl in benchmarks.all_benchmarks().items():
        if decl.source is not None:
            assert f"Release: numbers computed on `{decl.source.repo}` at commit `{decl.source.commit}`" in text, name
    assert text.count("Release: ") == len(benchmarks.names())


#: benchmarks whose fetched release files are all in ../shared/realdata and whose videos have a Hub source:
#: (name, how a video id picks its Hub part, model or None: fetch only); tempcompass runs in test_fetch.py with
#: tiny-vlm. VITATECS (13,838 items, two Hub parts: MSR-VTT and VATEX zips) is fetched, not scored, to keep the
#: suite's time: scoring is the same path as the others'.
DONE_WHEN = [("videocon-atphard", None, "tiny-clip"),
             ("vitatecs", lambda vid: 0 if vid.startswith("video") else 1, None)]


@pytest.mark.slow
@pytest.mark.parametrize("name, part_of, model", DONE_WHEN, ids=[d[0] for d in DONE_WHEN])
def test_fetch_then_run_scores_every_benchmark_with_a_public_video_source(realdata, name, part_of, model, tmp_path,
                                                                           monkeypatch, capsys):
    from hardneg.datasets.builder import build_benchmark
    from hardneg.datasets.videos import video_ids_of_folder
    from standins import StandIn, declaration_for

    real = benchmarks.get(name)
    build_benchmark(name, realdata / REALDATA_FOLDER[name], tmp_path / "ref")
    all_ids = video_ids_of_folder(tmp_path / "ref")
    ids = ([i for i in all_ids if part_of(i) == 0][:2] + [i for i in all_ids if part_of(i) == 1][:2]
           if part_of else all_ids[:3])
    monkeypatch.setenv("HARDNEG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    with StandIn() as standin:
        standin.serve_release(real.source, realdata / REALDATA_FOLDER[name])
        standin.serve_videos(real.source, ids, tmp_path / "clips", part_of=part_of)
        benchmarks.register(declaration_for(real, standin.pins(real.source)), replace=True)
        try:
            assert main(["fetch", name, "--mirror", standin.url, "--no-progress"]) == 0
            out = capsys.readouterr().out
            assert f"{len(ids)} of {len(all_ids)} referenced videos present and decodable" in out
            if model is None:
                return
            run = tmp_path / "run"
            assert main(["run", "--model", model, "--benchmarks", name, "--out", str(run), "--resamples", "0",
                         "--no-progress", "--no-charts"]) == 0
        finally:
            benchmarks.register(real, replace=True)
    import json

    results = json.loads((run / "results.json").read_text())
    scored = [r for k, r in results.items() if "/" in k]
    assert scored and all(r["run"]["source"]["commit"] == real.source.commit for r in scored)
    assert sum(r["n"] for r in scored) > 0 and all(r["videos"]["ok"] <= len(ids) for r in scored)


def test_a_file_pinned_by_its_git_blob_id_is_checked_by_it(tmp_path):
    """Files the offline snapshot lacked (PoSRank's 4 MiB+ negatives) are pinned by their git blob id; the download
    is checked against it as `git hash-object` computes it, and a mismatch is refused naming both ids."""
    import shutil
    import subprocess

    from hardneg.fetching import FetchError
    from hardneg.fetching.download import download
    from standins import StandIn

    if shutil.which("git") is None:
        pytest.skip("git is not installed: the reference blob id comes from `git hash-object`")
    data = b"uvo negatives\n" * 1000
    blob = subprocess.run(["git", "hash-object", "--stdin"], input=data, capture_output=True, check=True).stdout
    blob = blob.decode().strip()
    with StandIn() as standin:
        standin.files["/owner/repo/abc/negatives.json"] = data
        url = standin.url + "/owner/repo/abc/negatives.json"
        target = download(url, tmp_path / "negatives.json", None, "", git_blob=blob, progress=False)
        assert target.read_bytes() == data
        with pytest.raises(FetchError, match=f"git blob id mismatch, refused. expected {'0' * 40}, got {blob}"):
            download(url, tmp_path / "other.json", None, "", git_blob="0" * 40, progress=False)
    assert not (tmp_path / "other.json").exists() and not (tmp_path / "other.json.part").exists()
