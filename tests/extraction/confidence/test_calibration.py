"""Calibration and audit arithmetic: AUROC, Brier, ECE, reliability bins, Wilson intervals, sample sizes."""

from __future__ import annotations

import pytest

from extraction.confidence.calibration import (
    auroc,
    brier,
    ece,
    reliability_bins,
    sample_size_for_width,
    threshold_curve,
    wilson,
)


def test_auroc_is_one_when_every_right_field_outscores_every_wrong_one_and_half_on_ties():
    assert auroc([0.9, 0.8, 0.1], [1, 1, 0]) == 1.0
    assert auroc([0.1, 0.9], [1, 0]) == 0.0
    assert auroc([0.5, 0.5], [1, 0]) == 0.5
    assert auroc([0.5], [1]) is None


def test_brier_and_ece_are_zero_for_a_perfectly_sure_and_right_confidence():
    assert brier([1.0, 0.0], [1, 0]) == 0.0 and ece([1.0, 0.0], [1, 0]) == 0.0
    assert brier([0.5, 0.5], [1, 0]) == 0.25


def test_ece_measures_the_gap_between_stated_confidence_and_accuracy():
    scores, labels = [0.95] * 10, [1] * 7 + [0] * 3  # says 95%, right 70%
    assert ece(scores, labels) == pytest.approx(0.25)
    [top] = [b for b in reliability_bins(scores, labels) if b.count]
    assert (top.count, top.accuracy) == (10, 0.7)


def test_the_wilson_interval_is_known_and_never_leaves_zero_one():
    low, high = wilson(0, 20)
    assert low == 0.0 and high == pytest.approx(0.161, abs=0.001)
    low, high = wilson(5, 10)
    assert low == pytest.approx(0.237, abs=0.001) and high == pytest.approx(0.763, abs=0.001)
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_sample_size_is_the_fewest_more_items_that_make_the_interval_narrow_enough():
    more = sample_size_for_width(5, 100, width=0.05)
    low, high = wilson(round(0.05 * (100 + more)), 100 + more)
    assert more > 0 and high - low <= 0.05
    low, high = wilson(round(0.05 * (99 + more)), 99 + more)
    assert high - low > 0.05
    assert sample_size_for_width(50, 100_000, width=0.05) == 0


def test_the_threshold_curve_counts_review_load_against_false_passes_caught():
    docs = [(0.2, True), (0.6, False), (0.9, False), (0.95, True)]
    low, high = threshold_curve(docs, [0.5, 0.99])
    assert (low.routed, low.caught, low.missed) == (1, 1, 1)
    assert (high.routed, high.caught, high.missed) == (4, 2, 0)


def test_a_stratified_draw_takes_up_to_so_many_of_each_stratum_the_same_way_every_time():
    from extraction.confidence.calibration import stratified_draw

    strata = {"rows[].votes": list(range(100)), "acta_id": [500, 501], "total_votes": []}
    drawn = stratified_draw(strata, per_stratum=5, seed=7)
    assert [len(drawn[k]) for k in ("acta_id", "rows[].votes", "total_votes")] == [2, 5, 0]
    assert set(drawn["rows[].votes"]) <= set(range(100))
    assert drawn == stratified_draw({k: list(reversed(v)) for k, v in strata.items()}, per_stratum=5, seed=7)
    assert drawn != stratified_draw(strata, per_stratum=5, seed=8)
