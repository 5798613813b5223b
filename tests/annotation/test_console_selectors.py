"""Pure helpers of the console's progress page, checked on hand-worked values."""

from __future__ import annotations

from datetime import date

from annotation.console.selectors import CHART_HEIGHT, CHART_PAD, CHART_WIDTH, completion_chart, fast_outliers


def test_an_annotator_under_a_third_of_the_others_median_is_flagged():
    # Others' medians 60 and 90 → reference 75; 20 < 75/3 = 25 is flagged, 60 and 90 are not
    # (for 60: others 90 and 20 → 55, 60 > 18.3).
    flags = fast_outliers({1: (60.0, 10), 2: (90.0, 10), 3: (20.0, 10)})
    assert list(flags) == [3]
    assert "under 0.33 of the others' median (75 s)" in flags[3]


def test_just_above_a_third_is_not_flagged():
    assert fast_outliers({1: (60.0, 10), 2: (90.0, 10), 3: (25.5, 10)}) == {}


def test_annotators_with_few_items_are_neither_judged_nor_used_as_reference():
    # The fast one has 4 items (< 5): not judged; with one judged annotator left there is no comparison.
    assert fast_outliers({1: (60.0, 10), 2: (2.0, 4)}) == {}


def test_a_lone_annotator_is_never_flagged():
    assert fast_outliers({1: (1.0, 50)}) == {}


def test_nothing_submitted_gives_no_chart():
    assert completion_chart({}, {}, date(2026, 1, 1)) is None


def test_the_completion_chart_maps_cumulative_shares_onto_the_plot():
    # Pool A: 10 assignments, 2 submitted on day 0 and 3 on day 2 → 20 %, then 50 %; the line runs
    # on to "today" (day 4) at 50 %. x spans 4 days over the plot width; y 0–100 % over its height.
    chart = completion_chart({"A": [(date(2026, 1, 1), 2), (date(2026, 1, 3), 3)]}, {"A": 10}, date(2026, 1, 5))
    left, right = CHART_PAD, CHART_WIDTH - CHART_PAD
    top, bottom = CHART_PAD / 2, CHART_HEIGHT - CHART_PAD
    (line,) = chart.lines
    points = [tuple(map(float, p.split(","))) for p in line.points.split()]
    assert points[0] == (left, bottom)
    assert points[1] == (left, round(bottom - (bottom - top) * 0.2, 1))
    assert points[2] == (round(left + (right - left) * 2 / 4, 1), round(bottom - (bottom - top) * 0.5, 1))
    assert points[3] == (right, round(bottom - (bottom - top) * 0.5, 1))
    assert line.last_percent == 50
    assert chart.y_ticks[-1] == (top, "100%")
