"""rules/report: a round's report is bounded (issue 25, item 8)."""

from __future__ import annotations

from hive.rules.report import REPORT_LINES_MAX, report_lines


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
