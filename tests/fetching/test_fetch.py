"""`hardneg fetch` against the stand-ins (tests/fetching/standins.py): the Done-when flow, and every failure ending
in a clear message after which a rerun completes (issue 47)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hardneg.cli import main

REPO = Path(__file__).resolve().parents[2]


def _fetch(standin, *extra) -> int:
    return main(["fetch", "tempcompass", "--mirror", standin.url, "--no-progress", *extra])


def _cache() -> Path:
    return Path(os.environ["HARDNEG_CACHE"]) / "fetch"


def test_fetch_then_run_scores_without_data_or_videos(tempcompass, tmp_path, capsys):
    standin, source, ids = tempcompass
    assert _fetch(standin) == 0
    out = capsys.readouterr().out
    assert f"{len(ids)} of 410 referenced videos present and decodable" in out
    state = json.loads((_cache() / "state" / "tempcompass.json").read_text())
    assert state["commit"] == source.commit and state["coverage"]["present"] == len(ids)
    missing = state["coverage"]["missing"]
    assert len(missing) == 50 or state["coverage"]["n_missing"] == 410 - len(ids)
    assert all("not in the pinned archives of lmms-lab/TempCompass" in why for why in missing.values())
    for vid in ids:  # unpacked as the real layout names them
        assert (_cache() / "videos" / "tempcompass" / "videos" / f"{vid}.mp4").is_file()
    assert not (_cache() / "videos" / "tempcompass" / "README.txt").exists()  # outside the member pattern

    run = tmp_path / "run"
    assert main(["run", "--model", "tiny-vlm", "--benchmarks", "tempcompass", "--out", str(run), "--resamples", "0",
                 "--no-progress", "--no-charts"]) == 0
    text = capsys.readouterr().out
    assert "release github.com/llyx97/TempCompass @ e1b463166400" in text
    results = json.loads((run / "results.json").read_text())
    entry = results["tempcompass/all"]
    assert entry["n"] > 0 and entry["videos"]["ok"] == len(ids)
    assert entry["run"]["source"]["commit"] == source.commit
    assert entry["run"]["source"]["coverage"]["present"] == len(ids)
    assert "tempcompass" in results  # the benchmark's one number


def test_dry_run_prints_urls_sizes_hashes_and_video_source(tempcompass, capsys):
    standin, source, _ = tempcompass
    assert main(["fetch", "tempcompass", "--dry-run", "--mirror", standin.url]) == 0
    out = capsys.readouterr().out
    for f in source.files:
        assert f.sha256 in out and f"{f.size:,}" in out and standin.url + "/llyx97/TempCompass/" in out
    assert "lmms-lab/TempCompass @ c8a67d88a3bc6fd4b2f9ae2f9e112668fbe05722" in out
    assert standin.requests == []  # nothing downloaded
    assert not _cache().exists()


def test_wrong_hash_is_refused_naming_both_then_rerun_completes(tempcompass, realdata, capsys):
    standin, source, _ = tempcompass
    bad = b'{"tampered": true}\n'
    standin.serve_release(source, realdata / "tempcompass", replace={"meta_info.json": bad})
    assert _fetch(standin) == 2
    err = capsys.readouterr().err
    expected = next(f.sha256 for f in source.files if f.raw_name == "meta_info.json")
    assert "meta_info.json: sha256 mismatch, refused" in err
    assert expected in err and hashlib.sha256(bad).hexdigest() in err
    release = _cache() / "release" / "tempcompass" / source.commit
    assert not (release / "meta_info.json").exists() and not (release / "meta_info.json.part").exists()
    assert not (_cache() / "built" / "tempcompass").exists()
    standin.serve_release(source, realdata / "tempcompass")  # the source is right again
    assert _fetch(standin) == 0


def test_removed_video_is_reported_then_restored(tempcompass, capsys):
    from hardneg.fetching.coverage import check
    from hardneg.datasets.videos import video_ids_of_folder

    standin, source, ids = tempcompass
    assert _fetch(standin) == 0
    dest = _cache() / "videos" / "tempcompass"
    (dest / "videos" / f"{ids[0]}.mp4").unlink()
    report = check(video_ids_of_folder(_cache() / "built" / "tempcompass"), dest, source.video_parts,
                   decode=False)
    assert report["present"] == len(ids) - 1
    assert "then deleted: rerun `hardneg fetch` to restore it" in report["missing"][ids[0]]
    capsys.readouterr()
    assert _fetch(standin) == 0
    assert f"{len(ids)} of 410 referenced videos present" in capsys.readouterr().out
    assert (dest / "videos" / f"{ids[0]}.mp4").is_file()


def test_corrupt_archive_is_refused_and_deleted_then_rerun_completes(tempcompass, clips, capsys):
    """An archive whose bytes are corrupt where no sha256 is pinned for it (the Hub's NExT-QA zip has none): the
    unpack fails, the archive is deleted from the cache, and a rerun downloads and unpacks it."""
    from hardneg import benchmarks
    from standins import declaration_for

    standin, source, ids = tempcompass
    standin.serve_videos(source, ids, clips, corrupt=True)
    size = standin.pins(source)["tempcompass_videos.zip"][0]
    benchmarks.register(declaration_for(benchmarks.get("tempcompass"), {"tempcompass_videos.zip": (size, "")}),
                        replace=True)  # no sha256 pinned: the unpack is what finds the damage
    assert _fetch(standin) == 2
    err = capsys.readouterr().err
    assert "archive tempcompass_videos.zip of lmms-lab/TempCompass@c8a67d88a3bc is corrupt" in err
    assert "deleted from the cache, a rerun downloads it again" in err
    dest = _cache() / "videos" / "tempcompass"
    assert not any(p.suffix == ".mp4" for p in dest.rglob("*")) if dest.exists() else True
    assert not list(_cache().glob("videos/.unpack-*"))
    assert not list((Path(os.environ["HARDNEG_CACHE"]) / "hub").rglob("*.zip"))
    standin.serve_videos(source, ids, clips)
    assert _fetch(standin) == 0
    assert f"{len(ids)} of 410 referenced videos present" in capsys.readouterr().out


def test_full_disk_is_refused_before_downloading_then_rerun_completes(tempcompass, monkeypatch, capsys):
    import hardneg.fetching.download as download

    standin, source, _ = tempcompass
    real = shutil.disk_usage
    monkeypatch.setattr(download.shutil, "disk_usage", lambda p: real(p)._replace(free=1000))
    assert _fetch(standin) == 2
    err = capsys.readouterr().err
    assert "not enough free space for the release files of tempcompass: needs 715.7 KB, 1.0 KB free" in err
    assert standin.requests == []
    monkeypatch.setattr(download.shutil, "disk_usage", real)
    assert _fetch(standin) == 0


def test_offline_names_what_is_missing_then_uses_what_is_there(tempcompass, monkeypatch, capsys):
    standin, source, _ = tempcompass
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert _fetch(standin) == 2
    err = capsys.readouterr().err
    assert "offline (HF_HUB_OFFLINE=1): these release files are not here yet" in err
    assert "questions/caption_matching.json (524.7 KB)" in err and standin.requests == []
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert main(["fetch", "tempcompass", "--mirror", standin.url, "--no-progress", "--no-videos"]) == 0
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert _fetch(standin) == 2
    err = capsys.readouterr().err
    assert "these video archives are not here yet: lmms-lab/TempCompass@c8a67d88a3bc:tempcompass_videos.zip" in err
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert _fetch(standin) == 0
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    n = len(standin.requests)
    assert _fetch(standin) == 0 and len(standin.requests) == n  # everything is here: no request at all


def test_lmms_eval_copy_is_reused_not_downloaded(tempcompass, clips, capsys):
    standin, source, ids = tempcompass
    lmms = Path(os.environ["HF_HOME"]) / "tempcompass" / "videos"
    lmms.mkdir(parents=True)
    for vid in ids[:2]:
        shutil.copy(clips / f"{vid}.mp4", lmms / f"{vid}.mp4")
    assert _fetch(standin) == 0
    out = capsys.readouterr().out
    assert "reused lmms-eval's" in out and "2 of 410 referenced videos present" in out
    assert not any("/resolve/" in path for _, path, _ in standin.requests)


def test_run_without_fetch_prints_the_command_and_size_and_downloads_nothing(tempcompass, tmp_path, capsys):
    from hardneg import benchmarks
    from hardneg.benchmarks import tempcompass as module

    standin, source, _ = tempcompass
    benchmarks.register(module.BENCHMARK, replace=True)  # the real pins: the real download size
    assert main(["run", "--model", "blind-unigram", "--benchmarks", "tempcompass", "--out", str(tmp_path / "r"),
                 "--resamples", "0", "--no-progress", "--no-charts"]) == 0
    out = capsys.readouterr().out
    assert ("hardneg fetch tempcompass   # downloads 715.7 KB of release files and 418.4 MB of videos from "
            "lmms-lab/TempCompass") in out
    assert "scoring the built-in sample" in out and standin.requests == [] and not _cache().exists()


# ----------------------------------------------------------------------------- kill -9, then a rerun completes


def _spawn(code: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(condition, proc: subprocess.Popen, what: str) -> None:
    for _ in range(6000):  # polls, not a timing assertion: the process's own progress is the signal
        if condition():
            return
        if proc.poll() is not None:
            raise AssertionError(f"the fetch ended before {what}: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"never saw {what}")


def test_kill_9_during_download_leaves_no_file_then_rerun_resumes(tempcompass):
    standin, source, _ = tempcompass
    f = next(f for f in source.files if f.raw_name == "caption_matching.json")
    path = "/llyx97/TempCompass/" + source.commit + "/" + f.path
    standin.hang_after[path] = 200_000
    release = _cache() / "release" / "tempcompass" / source.commit
    part = release / "caption_matching.json.part"
    from standins import prelude

    proc = _spawn(prelude("tempcompass", standin.pins(source)) + "from hardneg.cli import main; main(['fetch', "
                  f"'tempcompass', '--mirror', {standin.url!r}, '--no-progress'])")
    _wait_for(lambda: part.is_file() and part.stat().st_size >= 200_000, proc, "200 KB downloaded")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (release / "caption_matching.json").exists()  # nothing half-written under the real name
    assert not (_cache() / "built").exists()
    del standin.hang_after[path]
    assert _fetch(standin) == 0
    assert ("GET", path, "bytes=200000-") in standin.requests  # resumed with HTTP Range
    assert hashlib.sha256((release / "caption_matching.json").read_bytes()).hexdigest() == f.sha256


def test_kill_9_during_unpack_leaves_whole_files_then_rerun_completes(tempcompass, clips):
    standin, source, ids = tempcompass
    dest = _cache() / "videos" / "tempcompass"
    flag = dest.parent / "slow-unpack-started"
    # each member's extraction waits after its first one: the process is killed mid-unpack
    from standins import prelude

    code = prelude("tempcompass", standin.pins(source)) + f"""
import time, pathlib
import hardneg.fetching.videos as v
real = v.extract_member
done = []
def slow(reader, target):
    real(reader, target)
    done.append(target)
    if len(done) == 1:
        pathlib.Path({str(flag)!r}).write_text("x")
        time.sleep(600)
v.extract_member = slow
from hardneg.cli import main
main(['fetch', 'tempcompass', '--mirror', {standin.url!r}, '--no-progress'])
"""
    proc = _spawn(code)
    _wait_for(flag.is_file, proc, "the unpack start")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not list((dest / "videos").glob("*.mp4")) if (dest / "videos").exists() else True
    assert not (dest / ".unpacked").exists()  # no marker: the next run unpacks again
    assert not (_cache() / "state" / "tempcompass.json").exists()
    assert _fetch(standin) == 0
    for vid in ids:
        assert (dest / "videos" / f"{vid}.mp4").read_bytes() == (clips / f"{vid}.mp4").read_bytes()
    assert not list(dest.parent.glob(".unpack-*"))


def test_export_lmms_eval_defaults_to_the_fetched_cache(tempcompass, tmp_path, capsys):
    standin, source, ids = tempcompass
    out = tmp_path / "tasks"
    assert main(["export", "lmms-eval", str(out), "--benchmarks", "tempcompass"]) == 2  # nothing fetched yet
    assert "hardneg fetch tempcompass   # downloads" in capsys.readouterr().err
    assert _fetch(standin) == 0
    assert main(["export", "lmms-eval", str(out), "--benchmarks", "tempcompass"]) == 0
    specs = [json.loads(p.read_text()) for p in out.glob("*/hardneg_task.json")]
    assert specs
    text = json.dumps(specs)
    assert str(_cache() / "built" / "tempcompass") in text and str(_cache() / "videos" / "tempcompass") in text


def test_the_real_archive_pin_refuses_the_stand_ins_synthetic_archive(tempcompass, monkeypatch, capsys):
    """The declaration pins the real archive's sha256 (its LFS oid); the stand-in's synthetic zip differs, so a
    fetch with the real pin is refused naming both hashes, and the download is deleted."""
    from hardneg import benchmarks
    from hardneg.benchmarks import tempcompass as module

    standin, source, _ = tempcompass
    benchmarks.register(module.BENCHMARK, replace=True)  # the real pin
    assert _fetch(standin) == 2
    err = capsys.readouterr().err
    real = module.SOURCE.videos.archives[0].sha256
    assert f"tempcompass_videos.zip: sha256 mismatch, refused. expected {real}, got " in err
    assert standin.pins(source)["tempcompass_videos.zip"][1] in err
    assert not list((Path(os.environ["HARDNEG_CACHE"]) / "hub").rglob("*.zip"))
