"""The statistics and charts behind the audit and the dashboard, against published numbers (pure)."""

from __future__ import annotations

import xml.etree.ElementTree as ET  # noqa: S405 - parses our own SVG output, not untrusted input

import pytest

from extraction.common import stats
from reviewer import charts

# Newcombe RG (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
# methods", Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score, no continuity correction).
NEWCOMBE_WILSON = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
    (29, 29, 0.8830, 1.0000),  # n / (n + z²); 0.8806 would be the exact (Clopper-Pearson) bound
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE_WILSON)
def test_the_wilson_interval_matches_newcombes_published_values(k, n, low, high):
    got_low, got_high = stats.wilson_interval(k, n)
    assert round(got_low, 4) == low and round(got_high, 4) == high


@pytest.mark.parametrize(("k", "n", "low", "high"), [(3, 50, 0.0206, 0.1622), (10, 10, 0.7225, 1.0)])
def test_the_wilson_interval_for_three_in_fifty_and_ten_in_ten(k, n, low, high):
    got_low, got_high = stats.wilson_interval(k, n)
    assert (round(got_low, 4), round(got_high, 4)) == (low, high)


def test_the_interval_is_exactly_zero_or_one_at_the_ends_and_all_of_it_with_no_data():
    assert stats.wilson_interval(0, 7)[0] == 0.0
    assert stats.wilson_interval(7, 7)[1] == 1.0
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    p = stats.proportion(0, 0)
    assert p.estimate is None and p.percent is None


def test_a_proportion_carries_its_estimate_and_interval_in_percent():
    p = stats.proportion(3, 50)
    assert p.estimate == 0.06 and p.percent == pytest.approx(6.0)
    assert round(p.low_percent, 2) == 2.06 and round(p.high_percent, 2) == 16.22


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5), (0, -1)])
def test_impossible_counts_are_refused(k, n):
    with pytest.raises(ValueError):
        stats.wilson_interval(k, n)


def test_percentiles_interpolate_between_closest_ranks_like_numpys_default():
    assert stats.percentile([15, 20, 35, 40, 50], 40) == pytest.approx(29.0)
    assert stats.percentile(range(1, 21), 95) == pytest.approx(19.05)
    assert stats.percentile(range(1, 101), 95) == pytest.approx(95.05)
    assert stats.percentile([3, 1, 2], 0) == 1 and stats.percentile([3, 1, 2], 100) == 3


def test_the_median_of_an_even_list_is_the_mean_of_its_middle_two_and_nothing_gives_none():
    assert stats.median([4, 1, 3, 2]) == 2.5
    assert stats.median([7]) == 7
    assert stats.median([]) is None and stats.percentile([], 95) is None and stats.mean([]) is None
    with pytest.raises(ValueError):
        stats.percentile([1], 101)


def test_a_distribution_counts_each_value_in_order():
    assert stats.distribution([3, 1, 1, 2, 1]) == [(1, 3), (2, 1), (3, 1)]


@pytest.mark.parametrize(("population", "kwargs", "size"), [
    (10, {"count": 3}, 3),
    (2, {"count": 5}, 2),
    (30, {"percent": 10}, 3),
    (7, {"percent": 10}, 1),
    (200, {"percent": 2.5}, 5),
    (201, {"percent": 2.5}, 6),
    (0, {"percent": 50}, 0),
])
def test_the_sample_size_is_a_capped_count_or_a_rounded_up_percentage(population, kwargs, size):
    assert stats.sample_size(population=population, **kwargs) == size


@pytest.mark.parametrize("kwargs", [{}, {"count": 1, "percent": 1}, {"count": 0}, {"percent": 0}, {"percent": 101}])
def test_a_sample_size_needs_exactly_one_sensible_request(kwargs):
    with pytest.raises(ValueError):
        stats.sample_size(population=10, **kwargs)


def test_the_same_seed_draws_the_same_sample_whatever_the_order_of_the_population():
    population = list(range(100, 200))
    first = stats.draw_sample(population, 10, seed=2024)
    assert first == stats.draw_sample(list(reversed(population)), 10, seed=2024)
    assert len(set(first)) == 10 and set(first) <= set(population) and first == sorted(first)
    assert stats.draw_sample(population, 10, seed=2025) != first


def test_the_draw_is_pinned_so_that_recorded_seeds_keep_drawing_the_same_documents():
    # If this changes, every recorded sample would redraw differently: the ranking must never change.
    assert stats.draw_sample(range(1, 101), 5, seed=42) == [1, 45, 53, 86, 88]


def test_a_draw_larger_than_the_population_is_refused():
    with pytest.raises(ValueError):
        stats.draw_sample([1, 2], 3, seed=1)


# --- charts --------------------------------------------------------------------------------------------


def test_a_bar_chart_escapes_its_labels_and_is_well_formed_svg():
    svg = charts.bar_chart([("<script>alert(1)</script>", 3), ('a"b&c', 1)], title="T <b>")
    assert "<script" not in svg and "&lt;script&gt;" in svg and "a&quot;b&amp;c" in svg
    root = ET.fromstring(svg)  # noqa: S314
    assert root.tag.endswith("svg") and root.get("role") == "img" and root.get("aria-label") == "T <b>"
    widths = [float(r.get("width")) for r in root.iter("{http://www.w3.org/2000/svg}rect")]
    assert widths[0] == pytest.approx(3 * widths[1])  # bars are proportional to their values


def test_a_column_chart_and_an_interval_chart_are_well_formed_and_say_when_empty():
    assert "No data yet" in charts.column_chart([], title="rounds")
    ET.fromstring(charts.column_chart([("1", 4), ("2", 1)], title="rounds", x_label="<rounds>"))  # noqa: S314
    svg = charts.interval_chart(estimate=0.06, low=0.0206, high=0.1622, title="rate")
    ET.fromstring(svg)  # noqa: S314
    assert "No data yet" in charts.bar_chart([], title="x")
