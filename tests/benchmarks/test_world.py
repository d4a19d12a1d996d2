"""The synthetic world (`hardneg.world`) and its benchmark `world`: determinism, the grammar, the truth
checker, every negative false against the world state, the build, chance, and bad inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from hardneg.video import FrameSettings, decode_frames
from hardneg.world import (Caption, Event, Phrase, WorldConfig, check, generate_world, judge, load_scenes, parse,
                           render, render_frames, sample_scene, video_path)
from hardneg.world import vocab
from hardneg.world.grammar import SLOTS, Ungrammatical
from hardneg.world.motion import relations

SMALL = WorldConfig(width=32, height=32, n_frames=8, fps=8)


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory) -> Path:
    return generate_world(tmp_path_factory.mktemp("w") / "raw", n_train=4, n_test=6, seed=3, config=SMALL)


# ----------------------------------------------------------------------------- determinism


def test_same_seed_same_caption_bytes_and_same_frames(world_dir, tmp_path):
    again = generate_world(tmp_path / "again", n_train=4, n_test=6, seed=3, config=SMALL)
    assert (again / "scenes.jsonl").read_bytes() == (world_dir / "scenes.jsonl").read_bytes()
    scenes = load_scenes(world_dir)
    assert [s.split for s in scenes] == ["train"] * 4 + ["test"] * 6
    settings = FrameSettings(n_frames=SMALL.n_frames, resize=None)
    for s in scenes[:3]:
        assert video_path(again, s.id).read_bytes() == video_path(world_dir, s.id).read_bytes()
        decoded = decode_frames(video_path(world_dir, s.id), settings)
        assert decoded.shape == (8, 32, 32, 3)
        # lossy H.264, but the decoded frames are the rendered ones up to coding noise
        assert np.abs(decoded.astype(int) - render_frames(s).astype(int)).mean() < 6
    other = generate_world(tmp_path / "other", n_train=4, n_test=0, seed=4, config=SMALL)
    assert [s.text for s in load_scenes(other)] != [s.text for s in scenes[:4]]


def test_a_scene_does_not_depend_on_how_many_are_made():
    assert sample_scene(3, "test", 5, SMALL) == sample_scene(3, "test", 5, SMALL)
    assert sample_scene(3, "test", 5, SMALL) != sample_scene(3, "train", 5, SMALL)


def test_generation_resumes_from_a_partial_folder_and_refuses_to_overwrite(tmp_path):
    out = tmp_path / "w"
    generate_world(out, n_train=2, n_test=0, seed=1, config=SMALL)
    with pytest.raises(FileExistsError, match="overwrite"):
        generate_world(out, n_train=2, n_test=0, seed=1, config=SMALL)
    first = video_path(out, "world-v1-s1-train-00000").read_bytes()
    partial = tmp_path / ".w2.partial" / "videos"
    partial.mkdir(parents=True)
    shutil.copy(video_path(out, "world-v1-s1-train-00000"), partial / "world-v1-s1-train-00000.mp4")
    (tmp_path / ".w2.partial" / "world.json").write_text((out / "world.json").read_text())
    generate_world(tmp_path / "w2", n_train=2, n_test=0, seed=1, config=SMALL)
    assert video_path(tmp_path / "w2", "world-v1-s1-train-00000").read_bytes() == first
    assert not (tmp_path / ".w2.partial").exists()


# ----------------------------------------------------------------------------- grammar and truth


def test_grammar_round_trip_and_spans():
    for i in range(200):
        s = sample_scene(0, "train", i)
        text = s.text
        assert parse(text) == s.caption and render(parse(text)) == text
        assert parse(text.capitalize() + ".") == s.caption
        from hardneg.world.grammar import render_spans

        _, spans = render_spans(s.caption)
        for slot, (a, b) in spans.items():
            assert text[a:b] == s.caption.get(slot)


@pytest.mark.parametrize("text,why", [
    ("a small red square moves slowly above a large blue circle, then it rotates quickly", "direction"),
    ("a small red square rotates slowly left above a large blue circle, then it grows quickly", "left. where a relation"),
    ("a small red square rotates slowly above a large blue circle, then it grows quickly now", "words after"),
    ("a tiny red square rotates slowly above a large blue circle, then it grows quickly", "size"),
    ("a small red square rotates slowly above a large blue circle", "ends"),
    ("a small red square rotates fast above a large blue circle, then it grows quickly", "manner"),
    ("the small red square rotates slowly above a large blue circle, then it grows quickly", "'a'"),
    ("a small red square rotates slowly on a large blue circle, then it grows quickly", "relation"),
    ("a small red square rotates slowly above a large blue circle; then it grows quickly", "characters"),
])
def test_ungrammatical_texts_are_named(text, why):
    with pytest.raises(Ungrammatical, match=why):
        parse(text)
    assert check(sample_scene(0, "test", 0), text) == "ungrammatical"


def test_truth_checker_on_hand_made_scenes():
    s = sample_scene(0, "test", 1)
    c = s.caption
    assert check(s, s.text) == "true"
    flip = {"slowly": "quickly", "quickly": "slowly"}
    assert check(s, c.with_slot("e1.manner", flip[c.e1.manner])) == "false"
    assert check(s, c.swapped_events()) == "false"
    other_rel = next(r for r in vocab.RELATIONS if r != c.relation)
    assert judge(s, c.with_slot("relation", other_rel)).reason.startswith("the subject is not")
    # the two noun phrases swapped: the still object does nothing, so it is false
    assert check(s, Caption(c.b, c.e1, c.relation, c.a, c.e2)) == "false"


def test_relations_hold_in_every_frame_and_exclude_each_other():
    for i in range(300):
        s = sample_scene(0, "train", i)
        assert relations(s) == {s.relation}


def test_every_fact_combination_can_be_placed_in_a_small_frame():
    from hardneg.world.scene import place

    rng = np.random.default_rng(0)
    for rel in vocab.RELATIONS:
        for size in vocab.SIZES:
            for v1, v2, d in (("moves", "grows", "up"), ("grows", "moves", "down"), ("bounces", "moves", "down"),
                              ("pulses", "moves", "left"), ("moves", "shakes", "right")):
                c = Caption(Phrase(size, "red", "square"), Event(v1, "quickly", d if v1 == "moves" else None), rel,
                            Phrase("large", "blue", "circle"), Event(v2, "quickly", d if v2 == "moves" else None))
                place(c, SMALL, rng)


# ----------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("seed", ["0", 1.5, None, True, -1])
def test_unknown_seed_types_are_refused(tmp_path, seed):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        generate_world(tmp_path / "w", n_train=1, n_test=0, seed=seed, config=SMALL)
    assert not (tmp_path / "w").exists()


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="WorldConfig.width"):
        WorldConfig(width=33)
    with pytest.raises(ValueError, match="WorldConfig.n_frames"):
        WorldConfig(n_frames=2)


def _other_relation(d: dict) -> None:
    """Claim another relation in both the field and the caption: only the positions can tell."""
    new = "above" if d["relation"] != "above" else "below"
    d["caption"] = d["caption"].replace(f" {d['relation']} a ", f" {new} a ", 1)
    d["relation"] = new


def _corrupt(world_dir: Path, tmp_path: Path, edit) -> Path:
    raw = Path(shutil.copytree(world_dir, tmp_path / "raw"))
    lines = (raw / "scenes.jsonl").read_text().splitlines()
    d = json.loads(lines[2])
    edit(d)
    lines[2] = json.dumps(d) if not isinstance(d, str) else d
    (raw / "scenes.jsonl").write_text("\n".join(lines) + "\n")
    return raw


@pytest.mark.parametrize("edit,words", [
    (lambda d: d["objects"][0].update(colour="mauve"), ["objects[0].colour", "'mauve'"]),
    (lambda d: d["objects"][1].pop("x"), ["objects[1] lacks", "'x'"]),
    (lambda d: d.update(n_frames="16"), ["field 'scene.n_frames' is str"]),
    (lambda d: d["events"][0].update(verb="dances"), ["field 'events'", "dances"]),
    (lambda d: d.update(caption=d["caption"].replace(", then", " then")), ["field 'caption'", "grammar"]),
    (lambda d: d.update(world_version="0"), ["field 'world_version'"]),
    (lambda d: _other_relation(d), ["field 'relation'", "positions"]),
])
def test_a_broken_scene_file_names_file_line_and_field(world_dir, tmp_path, edit, words):
    from hardneg.datasets.raw_common import RawFormatError

    raw = _corrupt(world_dir, tmp_path, edit)
    with pytest.raises(RawFormatError) as err:
        load_scenes(raw)
    msg = str(err.value)
    assert "scenes.jsonl, row 3" in msg and "Fix:" in msg
    for w in words:
        assert w in msg
