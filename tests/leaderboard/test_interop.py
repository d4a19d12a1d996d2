"""The board accepts what the project's own tools write: revisions match `hardneg.scoring`'s, and a
file covering several splits (the scorer's default for PoSRank) is stored as one version per split."""

from __future__ import annotations

import pytest

from hardneg.leaderboard import load_benchmarks
from hardneg.leaderboard.example import predictions_bytes
from helpers import ALICE
from hardneg.leaderboard.items import files_revision


@pytest.fixture(scope="module")
def built_samples(tmp_path_factory):
    datasets = pytest.importorskip("hardneg.datasets")
    root = tmp_path_factory.mktemp("samples")
    datasets.build_samples(root, benchmarks=("feint6k", "posrank", "fire"))
    return root


def test_revisions_match_the_scorer(built_samples):
    scoring = pytest.importorskip("hardneg.scoring")
    sets = load_benchmarks(built_samples)
    for (bench, config, split), items in sets.items():
        data = scoring.load_benchmark(str(built_samples / bench), config, [split], benchmark=bench)
        assert data.data_revision == items.revision, (bench, config, split)
    both = scoring.load_benchmark(str(built_samples / "posrank"), "vln_uvo", None, benchmark="posrank")
    parts = [sets[("posrank", "vln_uvo", s)] for s in both.splits]
    assert both.data_revision == files_revision([f for it in parts for f in it.files])


def test_multi_split_file_is_stored_per_split_in_one_go(board):
    noun, verb = board.item_sets[("posrank", "vln_uvo", "noun")], board.item_sets[("posrank", "vln_uvo", "verb")]
    ids = noun.ids.tolist() + verb.ids.tolist()
    scores = [[1.0] + [0.0] * (int(c) - 1) for c in list(noun.n_candidates) + list(verb.n_candidates)]
    labels = list(noun.label) + list(verb.label)
    for s, lab in zip(scores, labels):
        s[0], s[lab] = s[lab], s[0]  # the positive gets the top score
    data = predictions_bytes(noun, "org/multi", scores=scores, ids=ids, split="noun,verb",
                             revision=files_revision(noun.files + verb.files))
    out = board.submit(data, ALICE)
    assert out.ok, out.message
    assert [(s.split, s.version) for s in out.submissions] == [("noun", 1), ("verb", 1)]
    assert all(s.results["metrics"]["R@1"]["estimate"] == 1.0 for s in out.submissions)
    row = board.table("posrank", kinds=["submitted"]).iloc[0]
    assert row["PoSRank · vln_uvo/noun (%)"].startswith("100.0 [") and row["PoSRank · vln_uvo/verb (%)"].startswith("100.0 [")
    # one split's revision alone does not fit a two-split file; a missing id of either split is named
    bad = board.submit(predictions_bytes(noun, "org/multi", scores=scores, ids=ids, split="noun,verb"), ALICE)
    assert "data_revision" in bad.message and not bad.ok
    short = predictions_bytes(noun, "org/multi", scores=scores[:-1], ids=ids[:-1], split="noun,verb",
                              revision=files_revision(noun.files + verb.files))
    assert "1 id of vln_uvo/verb missing: 'uvo:verb:4'" in board.submit(short, ALICE).message
    assert board.store.count() == 2
