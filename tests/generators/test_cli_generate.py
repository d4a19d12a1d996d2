"""`hardneg generate` end to end: recipe/generator resolution, MC output, resume, worker-count invariance."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from hardneg.cli import main
from hardneg.cli.generate import load_recipe
from hardneg.schema import MC_ITEM_SCHEMA

CAPTIONS = ["A man is pushing the cart slowly into the room", "Two women walk backward on a white road",
            "A boy throws a red ball", "Dogs run", "The girl is eating an apple quickly"]


@pytest.fixture()
def corpus(tmp_path):
    p = tmp_path / "caps.txt"
    p.write_text("\n".join(CAPTIONS) + "\n")
    v = tmp_path / "vocab.json"
    v.write_text(json.dumps({"noun": ["cart", "box", "cup"], "verb": ["eat", "sit"], "adj": ["big", "old"],
                             "adv": ["loudly", "fast"], "adp": ["on", "under"]}))
    return p, v


def test_generate_writes_mc_items_and_resumes(corpus, tmp_path, capsys):
    caps, vocab = corpus
    out = tmp_path / "out"
    args = ["generate", "posrank", "--input", str(caps), "--out", str(out), "--set", f"vocabulary={vocab}",
            "--set", "k=5", "--seed", "3", "--batch-size", "2", "--no-progress"]
    assert main(args) == 0
    table = pq.read_table(out / "items.parquet")
    assert table.schema.equals(MC_ITEM_SCHEMA, check_metadata=False)
    ids = table.column("id").to_pylist()
    assert ids == sorted(ids) and "000000/verb" in ids and "000003/adv" not in ids
    recipe = json.loads((out / "recipe.json").read_text())
    assert recipe["seed"] == 3 and recipe["settings"]["k"] == 5 and recipe["generator_version"] == "2.0"
    first = (out / "items.parquet").read_bytes()
    # rerun = resume: nothing redone, same bytes
    assert main(args) == 0
    assert (out / "items.parquet").read_bytes() == first
    # other settings into the same folder: refused, never mixed with the earlier shards
    assert main(args + ["--seed", "4"]) == 2
    assert "other settings" in capsys.readouterr().err
    assert (out / "items.parquet").read_bytes() == first
    # a recipe with a pinned version of another release is refused with a clear message
    bad = tmp_path / "r.yaml"
    bad.write_text("generator: gender\nversion: '9.9'\nseed: 0\n")
    assert main(["generate", str(bad), "--input", str(caps), "--out", str(tmp_path / "o2"), "--no-progress"]) == 2
    assert "version 9.9" in capsys.readouterr().err


@pytest.mark.slow
def test_same_bytes_with_two_workers(corpus, tmp_path):
    caps, vocab = corpus
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        assert main(["generate", "gender", "--input", str(caps), "--out", str(out), "--batch-size", "2",
                     "--workers", str(workers), "--no-progress"]) == 0
        outs.append((out / "items.parquet").read_bytes())
    assert outs[0] == outs[1]
    rows = pq.read_table(tmp_path / "w1" / "items.parquet").to_pylist()
    negs = [r["captions"][1] for r in rows]
    assert negs[:3] == ["A woman is pushing the cart slowly into the room", "Two men walk backward on a white road",
                        "A girl throws a red ball"]
    assert negs[3] in ("The boy is eating an apple quickly", "The guy is eating an apple quickly")


def test_recipes_resolve_and_bad_input_is_clear(tmp_path, capsys):
    for name in ("posrank_uvo_adverb", "contrast_gender_msrvtt", "contrast_id_lsmdc", "contrast_verb_lm_msrvtt",
                 "feint6k_llm_teacher"):
        r = load_recipe(name)
        assert r["generator"] and "seed" in r and r["version"]
    with pytest.raises(ValueError, match="neither a recipe"):
        load_recipe("no_such_recipe")
    csv = tmp_path / "c.csv"
    csv.write_text("id,text_col\n1,a man walks\n")
    assert main(["generate", "gender", "--input", str(csv), "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    assert "--caption-column" in capsys.readouterr().err


def test_release_caption_lines_keep_their_keys(corpus, tmp_path, capsys):
    """`<key>**#**<caption>` input: ids are the keys, captions carry no prefix; plain files keep line numbers."""
    caps, vocab = corpus
    release = tmp_path / "captions.txt"
    release.write_text("".join(f"vid{i % 2}##*##{i}**#**{c}\n" for i, c in enumerate(CAPTIONS)), encoding="utf-8")
    out = tmp_path / "rel"
    assert main(["generate", "posrank", "--input", str(release), "--out", str(out), "--set", f"vocabulary={vocab}",
                 "--set", "k=3", "--no-progress"]) == 0
    rows = pq.read_table(out / "items.parquet").to_pylist()
    assert rows and all("**#**" not in c for r in rows for c in r["captions"])
    by_source = {r["id"].rsplit("/", 1)[0] for r in rows}
    assert by_source <= {f"vid{i % 2}##*##{i}" for i in range(len(CAPTIONS))} and "vid0##*##0" in by_source
    for r in rows:
        key = r["id"].rsplit("/", 1)[0]
        assert r["captions"][0] == CAPTIONS[int(key.rpartition("##*##")[2])]
        assert r["video_id"] == key.rpartition("##*##")[0]
    # the same captions as a plain file: ids are line numbers, the captions (and negatives) the same
    plain = tmp_path / "plain"
    assert main(["generate", "posrank", "--input", str(caps), "--out", str(plain), "--set", f"vocabulary={vocab}",
                 "--set", "k=3", "--no-progress"]) == 0
    prow = pq.read_table(plain / "items.parquet").to_pylist()
    assert {r["id"].rsplit("/", 1)[0] for r in prow} <= {f"{i:06d}" for i in range(len(CAPTIONS))}
    assert sorted(r["captions"][0] for r in prow) == sorted(r["captions"][0] for r in rows)
    # one format per file
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("v##*##0**#**A dog runs\nA cat sleeps\n", encoding="utf-8")
    assert main(["generate", "gender", "--input", str(mixed), "--out", str(tmp_path / "m"), "--no-progress"]) == 2
    assert "line 2" in capsys.readouterr().err
