"""Where a benchmark's multiple-choice files put the true caption first (the world's: `label` 0 in every row),
every consumer that shows the candidates as a list shuffles them (issue 43): the demo's candidate list and its
ranking of tied scores. A list in file order would put the answer at the top."""

from __future__ import annotations

import numpy as np

import demo_logic as dl


def _items(n_items: int = 200, n: int = 6):
    return [[f"item {i} caption {j}" for j in range(n)] for i in range(n_items)]


def test_the_candidate_list_does_not_show_the_first_caption_first():
    first = [dl.candidates_text(caps, 0).splitlines()[0].startswith("✓") for caps in _items()]
    assert 0.05 < np.mean(first) < 0.35  # about 1 in 6, as for a shuffled list; file order would give 1.0
    caps = _items(1)[0]
    assert dl.candidates_text(caps, 0) == dl.candidates_text(list(caps), 0)  # the same item, the same order
    assert sorted(dl.shown_order(caps)) == list(range(len(caps)))


def test_tied_scores_do_not_rank_the_first_caption_first():
    """A constant scorer: every candidate tied. File order would put the positive (index 0) at rank 1 always."""
    tops = [dl.rank_candidates(np.zeros(6), caps, 0, None)[0][0] for caps in _items()]
    assert 0.05 < np.mean(np.asarray(tops) == 0) < 0.35
    order, rows = dl.rank_candidates(np.array([0.1, 0.9, 0.5]), ["a", "b", "c"], 0, None)
    assert order == [1, 2, 0] and rows[2][1] == "✓ positive"  # unequal scores still rank by score


def test_the_world_files_put_the_true_caption_first(tmp_path):
    """Why the shuffle is needed: the built world's multiple-choice rows all have label 0."""
    from hardneg.world.negatives import benchmark_item, item_row
    from hardneg.world import sample_scene

    labels = {item_row(s, benchmark_item(s), "x")["label"] for s in (sample_scene(0, "test", i) for i in range(20))}
    assert labels == {0}
