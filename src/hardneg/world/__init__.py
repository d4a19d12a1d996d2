"""A synthetic video world with ground truth: scenes, their videos, captions, and a truth checker.

Each scene is two objects (shape: noun; colour, size: adjectives) where the first, the subject,
does two things in order (action: verb; manner: adverb; a direction for `moves`) while standing
in one spatial relation to the other (preposition), over the whole video. Its caption comes from
a small grammar (`hardneg.world.grammar`), e.g.

    "a small red square moves slowly left above a large blue circle, then it rotates quickly"

and `check(scene, caption)` says whether any caption of that grammar is "true", "false" or
"ungrammatical" for the scene, from the scene's state alone (positions recomputed per frame).

Stable API (other code builds on it; change only with its callers):

    from hardneg.world import WorldConfig, generate_world, load_scenes, video_path, check, judge, sample_scene

    generate_world(out, n_train=1000, n_test=200, seed=0, config=WorldConfig(width=64, height=64,
                   n_frames=16, fps=8), overwrite=False, progress=False) -> Path
        # writes out/world.json, out/scenes.jsonl (one scene per line), out/videos/<scene id>.mp4 (H.264,
        # through hardneg.video.write_video); deterministic in (seed, config); resumable
    load_scenes(out, splits=None) -> list[Scene]       # checked; errors name file, line, field, fix
    video_path(out, scene.id) -> Path
    scene.id, scene.split ("train"/"test"), scene.text (its true caption), scene.caption (parsed facts),
    scene.objects, scene.events, scene.relation, scene.to_dict()
    check(scene, text) -> "true" | "false" | "ungrammatical";  judge(scene, text) -> Verdict(value, reason)
    sample_scene(seed, split, index, config) -> Scene  # one scene, no files
    render_frames(scene) -> (T, H, W, 3) uint8;  write_scene_video(scene, path)
    hardneg.world.negatives: the verified negatives of the benchmark `world` (PoSRank-style per part of
        speech, counterfactual actions, temporal pairs: `scene_items(scene)`), and for training
        `word_negatives(scene, pos, k=16, seed=0) -> list[str]` (any slot of the part of speech, checked false).
        `benchmark_item(scene)`: the ONE item a test scene gives the benchmark (no caption repeats across items).
    hardneg.world.audit: judge any generator's negatives (`judge_negative(scene, text)`), through
        hardneg.world.english (closed-vocabulary truth tables, English grammaticality).
    hardneg.world.leakage: text-only attacks on a test file (`frequency_guess`, `BagOfWords`).

The command line: `hardneg world generate OUT --train N --test N --seed S` (and `hardneg build world OUT`).
Modules: vocab (words and what they mean in pixels), grammar (text <-> facts), scene (drawing a
scene), motion (trajectories, relations), draw (frames, video), truth (the checker), release
(a world on disk), negatives (verified negatives).
"""

from hardneg.world.grammar import Caption, Event, Phrase, Ungrammatical, is_grammatical, parse, render
from hardneg.world.release import generate_world, load_scenes, scene_from_dict, video_path
from hardneg.world.draw import render_frames, write_scene_video
from hardneg.world.scene import WORLD_VERSION, Scene, WorldConfig, WorldObject, sample_scene
from hardneg.world.truth import FALSE, TRUE, UNGRAMMATICAL, Verdict, check, judge

__all__ = [
    "Caption", "Event", "FALSE", "Phrase", "Scene", "TRUE", "UNGRAMMATICAL", "Ungrammatical", "Verdict",
    "WORLD_VERSION", "WorldConfig", "WorldObject", "check", "generate_world", "is_grammatical", "judge",
    "load_scenes", "parse", "render", "render_frames", "sample_scene", "scene_from_dict", "video_path",
    "write_scene_video",
]
