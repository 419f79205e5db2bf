"""GitHub's deliveries are not trusted for order (issue 25, item 6): a replayed or stale
delivery changes nothing, and GitHub's issue numbers never reach the hive's own issues."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest

from hive.forge.github.hooks import Hooks
from hive.forge.github.intake import Synced
from hive.services import issues as issue_service
from hive.store import issues
from hive.store.issues import NewIssue
from tests.fakes.fake_github import FakeGitHub
from tests.live.forge.test_github_intake import BODY

pytestmark = pytest.mark.live

SECRET = "a-webhook-secret-of-some-length"
T1, T2, T3 = "2026-12-02T05:00:00Z", "2026-12-02T05:01:00Z", "2026-12-02T05:02:00Z"


def _hooks(db: Any, github: FakeGitHub) -> Hooks:
    return Hooks(db, secret=SECRET, full_name=github.full_name, label="hive")


def _deliver(
    hooks: Hooks, github: FakeGitHub, number: int, delivery: str, **issue: Any
) -> dict[str, Any]:
    """Deliver GitHub's issue `number` as it stands, with `issue`'s fields changed."""
    payload = {
        "action": "edited",
        "issue": {**github.state.issues[number], **issue},
        "repository": {"full_name": github.full_name},
    }
    body = json.dumps(payload).encode()
    sig = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"X-GitHub-Event": "issues", "X-Hub-Signature-256": sig}
    headers["X-GitHub-Delivery"] = delivery
    answer = hooks.handle(headers, body)
    assert answer.status == 200, answer
    return dict(answer.body)


def test_a_replayed_close_after_a_reopen_changes_nothing(db, github):
    hooks = _hooks(db, github)
    number = github.add_issue("Greet", BODY, hook=False)
    assert _deliver(hooks, github, number, "d-1", updated_at=T1)["synced"] == "new"
    assert _deliver(hooks, github, number, "d-2", state="closed", updated_at=T2)["synced"] == (
        "closed"
    )
    assert _deliver(hooks, github, number, "d-3", updated_at=T3)["synced"] == "reopened"
    replay = _deliver(hooks, github, number, "d-2", state="closed", updated_at=T2)
    assert replay == {"ignored": "delivery d-2 was handled already"}
    assert issues.get(db, number).state == "open"


def test_an_old_closed_delivered_after_a_reopen_changes_nothing(db, github):
    hooks = _hooks(db, github)
    number = github.add_issue("Greet", BODY, hook=False)
    _deliver(hooks, github, number, "d-1", updated_at=T1)
    _deliver(hooks, github, number, "d-3", updated_at=T3)  # reopened at T3, say
    late = _deliver(hooks, github, number, "d-2", state="closed", updated_at=T2)
    assert late == {"issue": number, "synced": "stale"}
    assert issues.get(db, number).state == "open"


def test_an_old_opened_delivered_after_an_edit_changes_nothing(db, github):
    hooks = _hooks(db, github)
    number = github.add_issue("Greet", BODY, hook=False)
    _deliver(hooks, github, number, "d-2", title="Greet warmly", updated_at=T2)
    late = _deliver(hooks, github, number, "d-1", title="Greet", updated_at=T1)
    assert late["synced"] == "stale"
    assert issues.get(db, number).title == "Greet warmly"


def test_a_stale_listing_in_a_poll_changes_nothing(db, github, forge):
    number = github.add_issue("Greet", BODY, hook=False)
    github.state.issues[number]["updated_at"] = T3
    forge.intake.poll()
    github.state.issues[number].update(title="An old title", updated_at=T1)
    assert forge.intake.sync(github.state.issues[number]).did == Synced.STALE
    assert issues.get(db, number).title == "Greet"


def test_githubs_issue_eight_never_closes_the_hives_own_eight(db, github, forge):
    for n in range(1, 9):
        issue_service.add(db, NewIssue(f"local {n}", labels=("hive",)))
    for n in range(1, 9):
        github.add_issue(f"remote {n}", BODY, hook=False)
    github.edit_issue(8, state="closed", hook=False)
    hooks = _hooks(db, github)
    assert _deliver(hooks, github, 8, "d-8")["synced"] == "ignored"
    assert (issues.get(db, 8).state, issues.get(db, 8).title) == ("open", "local 8")
    github.edit_issue(8, state="open", hook=False)
    refused = _deliver(hooks, github, 8, "d-9")
    assert refused["synced"] == "refused"
    # the poll neither follows GitHub's issues nor closes the hive's own as unlabelled
    forge.intake.poll()
    assert [(i.title, i.state) for i in issues.listing(db)] == [
        (f"local {n}", "open") for n in range(1, 9)
    ]


def test_the_watch_never_speaks_on_githubs_issue_for_the_hives_own(db, github, forge):
    number = issue_service.add(db, NewIssue("local, no boundary", labels=("hive",)))
    github.add_issue("remote", BODY, hook=False)
    forge.watch.run_once()
    forge.watch.merged(number, "a" * 40)
    assert github.comments_on(number) == []
    assert github.state.issues[number]["state"] == "open"
