"""A boundary path no turn can start with (a newline is HIVE_BOUNDARY's separator) is
refused by the shape rule before any order is written: the Queen says why in every
round's report and never dispatches it, so it is not retried for ever (issue 14)."""

from __future__ import annotations

import pytest

from hive.store import orders, reports
from tests.live.runtime.conftest import add_issue
from tests.live.runtime.test_queen import queen_of


# (a NUL never reaches the store: PostgreSQL's text refuses it, and so does the intake)
@pytest.mark.parametrize("path", ["src/a\nb.py", "src/app.py\n", "src/\x1bapp.py", "\rsrc/x.py"])
def test_a_boundary_path_with_a_control_character_is_reported_and_never_dispatched(
    make_runtime, path
):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1, boundary=(path,), body=f"touch {path}")
    add_issue(rt.db, 2, boundary=("src/app.py",))
    queen = queen_of(rt)
    for _ in range(3):
        result = queen.run_once()
        assert 1 not in result.dispatched
    assert [o.issue for o in orders.listing(rt.db)] == [2]
    for report in reports.latest(rt.db, 3):
        assert f"#1: boundary path {path!r} holds a control character" in report.body
        assert "\x1b" not in report.body and "\r" not in report.body
        assert report.needs_you
