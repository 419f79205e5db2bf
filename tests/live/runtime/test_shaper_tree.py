"""The shaper in `hive serve`'s tree (DESIGN 11): with HIVE_SHAPER_AGENT=demo and
HIVE_SHAPE=apply, an issue added with no boundary and no criteria is shaped by the
Queen's process and then dispatched like any other."""

from __future__ import annotations

import time

from hive.store import issues, orders, shapes
from hive.store.issues import NewIssue

WAIT_SECONDS = 60.0


def test_an_unshaped_issue_is_shaped_then_dispatched(hive_tree):
    hive = hive_tree("demo", SHAPER_AGENT="demo", SHAPE="apply")
    db = hive.runtime.db
    body = "Greet in French.\n\nappend `docs/french.md`: Bonjour\n"
    number = issues.create(db, NewIssue(title="French", body=body)).number
    deadline = time.monotonic() + WAIT_SECONDS
    while orders.get(db, number) is None:
        assert time.monotonic() < deadline, "the shaped issue was never dispatched"
        time.sleep(0.1)
    shape = shapes.get(db, number)
    assert shape is not None and shape.state == shapes.APPLIED
    issue = issues.get(db, number)
    assert issue is not None and issue.boundary == ["docs/french.md"]
