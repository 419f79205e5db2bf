"""rules/report: a round's report is bounded (issue 25, item 8), and one that says the
same as the last is written again only once that one is old (issue 28)."""

from __future__ import annotations

from hive.rules.report import REPORT_LINES_MAX, REPORT_REPEAT_SECONDS, report_due, report_lines


def test_a_short_report_is_kept_whole() -> None:
    lines = [f"#{n}: no boundary" for n in range(REPORT_LINES_MAX)]
    assert report_lines(lines) == lines


def test_a_long_report_keeps_its_first_lines_and_counts_the_rest() -> None:
    lines = [f"#{n}: no boundary" for n in range(2000)]
    kept = report_lines(lines)
    assert kept[:REPORT_LINES_MAX] == lines[:REPORT_LINES_MAX]
    assert kept[REPORT_LINES_MAX:] == [
        f"... and 1900 more not named (a round names at most {REPORT_LINES_MAX})"
    ]


def test_a_report_is_written_first_and_when_it_says_something_else() -> None:
    nothing = ("nothing to dispatch", "", False)
    assert report_due(None, nothing, 0.0)
    assert not report_due(nothing, nothing, 0.0)
    assert report_due(nothing, ("dispatched #1", "", False), 0.0)
    assert report_due(nothing, ("nothing to dispatch", "#2: held", False), 0.0)
    assert report_due(nothing, ("nothing to dispatch", "", True), 0.0)


def test_the_same_report_is_written_again_once_the_last_is_old() -> None:
    nothing = ("nothing to dispatch", "", False)
    assert not report_due(nothing, nothing, REPORT_REPEAT_SECONDS - 0.001)
    assert report_due(nothing, nothing, REPORT_REPEAT_SECONDS)
    assert report_due(nothing, nothing, 5.0, repeat_seconds=5.0)
