"""The shaper on GitHub (DESIGN 11): a free-form issue with no sections is shaped (ask),
the night watch comments the proposal and how to accept it, the label `hive:shape-ok`
applies it (GitHub's body gets the sections, so the next sync reads the same), and the
issue becomes work."""

from __future__ import annotations

from typing import Any

import pytest

from hive.actors.reviewer.config import ReviewerConfig
from hive.actors.shaper import Shaper
from hive.metrics import HiveMetrics
from hive.rules.forge_body import body_sections
from hive.store import issues, shapes
from tests.fakes.fake_github import FakeGitHub

pytestmark = pytest.mark.live

BODY = "Please add a French greeting.\n\nappend `docs/french.md`: Bonjour\n"


def test_a_free_form_issue_is_shaped_commented_and_accepted_by_its_label(
    db: Any, github: FakeGitHub, forge: Any, queen_checkout: Any
) -> None:
    number = github.add_issue("French please", BODY, hook=False)
    forge.intake.poll()
    shaper = Shaper(
        db,
        queen_checkout,
        HiveMetrics(),
        "demo",
        "ask",
        ReviewerConfig(),
        edit_remote=forge.repo.edit_issue_body,
    )
    assert shaper.run_once().state == shapes.PENDING
    forge.watch.run_once()
    said = [c["body"] for c in github.comments_on(number)]
    (shape_comment,) = [b for b in said if "<!-- hive:shape -->" in b]
    assert "hive issue accept-shape" in shape_comment and "hive:shape-ok" in shape_comment
    assert "docs/french.md" in shape_comment
    github.edit_issue(number, labels=["hive", "hive:shape-ok"], hook=False)
    forge.intake.poll()
    forge.watch.run_once()
    shape = shapes.get(db, number)
    assert shape is not None and shape.state == shapes.APPLIED
    assert "accepted by the label hive:shape-ok on GitHub" in shape.note
    sections = body_sections(github.state.issues[number]["body"])
    assert sections.boundary == ("docs/french.md",)
    forge.intake.poll()  # GitHub's edited body, synced: the same boundary and criteria
    issue = issues.get(db, number)
    assert issue is not None and issue.boundary == ["docs/french.md"]
    assert issue.criteria == ["file `docs/french.md` contains `Bonjour`"]
    assert not shaper.run_once()  # work now: nothing to shape
