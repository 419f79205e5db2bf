"""Issues in and the night watch, on a real PostgreSQL against the fake GitHub: the
labelled issues synced (title, body sections, labels), edits, closes, reopens and a
removed label followed; a quiet poll is a 304; the webhook's signature checked; comments
made once and edited, never repeated."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from hive.forge.github.hooks import Hooks, signature_ok
from hive.forge.github.intake import Synced
from hive.forge.github.wiring import AccountOf
from hive.rules.credits import no_credit_sentence
from hive.rules.issue_states import ClosedCode, IssueState
from hive.store import credits, issues
from tests.fakes.fake_github import FakeGitHub
from tests.live.forge.conftest import TOKEN

pytestmark = pytest.mark.live

BODY = """Greet people.

## Boundary
- `src/app.py`

## Criteria
- file `src/app.py` contains `hello`
"""
SECRET = "a-webhook-secret-of-some-length"


def test_a_labelled_issue_comes_in_with_its_sections_and_labels(db, github, forge):
    number = github.add_issue("Greet", BODY, ["hive", "P1"], hook=False)
    github.add_issue("Not ours", BODY, ["bug"], hook=False)
    polled = forge.intake.poll()
    assert polled.changed and [r.did for r in polled.results] == [Synced.NEW]
    issue = issues.get(db, number)
    assert issue is not None and issue.title == "Greet" and issue.labels == ["hive", "P1"]
    assert issue.boundary == ["src/app.py"]
    assert issue.criteria == ["file `src/app.py` contains `hello`"]
    assert len(issues.listing(db)) == 1


def test_a_quiet_poll_is_a_304_and_costs_no_rate_limit(db, github, forge):
    github.add_issue("Greet", BODY, hook=False)
    forge.intake.poll()
    used = github.rate_used
    for _ in range(5):
        quiet = forge.intake.poll()
        assert quiet.status == 304 and not quiet.changed
    assert github.rate_used == used
    assert forge.client.counts.not_modified == 5


def test_a_poll_cut_off_midway_takes_the_rest_at_the_next_poll(db, github, forge):
    """The store went away after some issues of the listing were synced (a restart): the
    next poll reads them again, though GitHub's listing did not change. Before, the
    listing's ETag was kept before its issues were synced, so the next poll was a 304
    and the rest waited until an issue changed (hive chaos --forge github: 145 of 300
    issues never came in)."""
    numbers = [github.add_issue(f"Greet {k}", BODY, hook=False) for k in range(3)]
    real = forge.intake.sync
    synced: list[int] = []

    def the_store_goes_at_the_second(data: Any) -> Any:
        if len(synced) == 1:
            synced.append(0)
            raise OSError("the store restarts")
        synced.append(int(data["number"]))
        return real(data)

    forge.intake.sync = the_store_goes_at_the_second  # type: ignore[method-assign]
    with pytest.raises(OSError):
        forge.intake.poll()
    assert len(issues.listing(db)) == 1
    again = forge.intake.poll()
    assert again.status == 200 and again.changed
    assert sorted(i.number for i in issues.listing(db)) == numbers
    assert forge.intake.poll().status == 304  # whole now: a quiet poll again


def test_edits_closes_reopens_and_a_removed_label_are_followed(db, github, forge):
    number = github.add_issue("Greet", BODY, hook=False)
    forge.intake.poll()
    github.edit_issue(number, title="Greet warmly", body=BODY.replace("hello", "hi"), hook=False)
    assert [r.did for r in forge.intake.poll().results] == [Synced.EDITED]
    issue = issues.get(db, number)
    assert issue is not None and issue.title == "Greet warmly"
    assert issue.criteria == ["file `src/app.py` contains `hi`"]
    github.edit_issue(number, state="closed", hook=False)
    assert [r.did for r in forge.intake.poll().results] == [Synced.CLOSED]
    assert issues.get(db, number).state == "closed"  # type: ignore[union-attr]
    github.edit_issue(number, state="open", hook=False)
    assert [r.did for r in forge.intake.poll().results] == [Synced.REOPENED]
    assert issues.get(db, number).state == "open"  # type: ignore[union-attr]
    github.edit_issue(number, labels=["bug"], hook=False)
    gone = forge.intake.poll().results
    assert [(r.did, r.reason) for r in gone] == [(Synced.CLOSED, "unlabelled on GitHub")]
    assert issues.get(db, number).state == "closed"  # type: ignore[union-attr]


def test_a_pull_request_in_the_listing_is_not_an_issue(db, github, forge):
    number = github.add_issue("Greet", BODY, hook=False)
    github.state.issues[number]["pull_request"] = {"url": "x"}
    assert [r.did for r in forge.intake.poll().results] == [Synced.IGNORED]
    assert issues.get(db, number) is None


def test_an_issue_that_cannot_be_the_hives_is_refused_with_its_reason(db, github, forge):
    number = github.add_issue("x" * 250, BODY, hook=False)
    (result,) = forge.intake.poll().results
    assert result.did == Synced.REFUSED and result.reason.startswith("title:")
    assert issues.get(db, number) is None


def _signed(
    payload: dict[str, Any], event: str, secret: str = SECRET
) -> tuple[dict[str, str], bytes]:
    body = json.dumps(payload).encode()
    sig = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-GitHub-Event": event, "X-Hub-Signature-256": sig}, body


def _hooks(db: Any, github: FakeGitHub, told: list[str]) -> Hooks:
    return Hooks(
        db,
        secret=SECRET,
        full_name=github.full_name,
        label="hive",
        issues_changed=lambda: told.append("queen"),
        jobs_ready=lambda: told.append("jobs"),
    )


def test_a_signed_issues_delivery_syncs_the_issue_at_once(db, github):
    told: list[str] = []
    number = github.add_issue("Greet", BODY, hook=False)
    headers, body = _signed(
        {
            "action": "labeled",
            "issue": github.state.issues[number],
            "repository": {"full_name": github.full_name},
        },
        "issues",
    )
    answer = _hooks(db, github, told).handle(headers, body)
    assert answer.status == 200 and answer.body == {"issue": number, "synced": "new"}
    assert issues.get(db, number) is not None and told == ["queen"]
    assert github.calls == []  # the payload was enough: no API request


@pytest.mark.parametrize(
    "signature",
    [None, "", "sha256=", "sha1=abc", "sha256=" + "0" * 64],
)
def test_a_delivery_without_a_valid_signature_is_401_and_not_read(db, github, signature):
    told: list[str] = []
    number = github.add_issue("Greet", BODY, hook=False)
    headers, body = _signed({"issue": github.state.issues[number]}, "issues")
    headers["X-Hub-Signature-256"] = signature  # type: ignore[assignment]
    if signature is None:
        del headers["X-Hub-Signature-256"]
    assert _hooks(db, github, told).handle(headers, body).status == 401
    assert issues.get(db, number) is None and told == []


def test_a_body_signed_under_another_secret_is_refused(db, github):
    headers, body = _signed({"zen": "hi"}, "ping", secret="another-secret-entirely")
    assert _hooks(db, github, []).handle(headers, body).status == 401
    assert not signature_ok("", body, headers["X-Hub-Signature-256"])


def test_a_check_run_delivery_wakes_the_job_of_its_branch(db, github):
    from hive.store import waits

    waits.add(db, "job:1", key="github:7", wake_in_seconds=600)
    told: list[str] = []
    payload = {
        "action": "completed",
        "check_run": {"check_suite": {"head_branch": "queen-7"}},
        "repository": {"full_name": github.full_name},
    }
    answer = _hooks(db, github, told).handle(*_signed(payload, "check_run"))
    assert answer.body == {"woken": [7]} and told == ["jobs"]


def test_a_delivery_for_another_repository_is_ignored(db, github):
    payload = {"issue": {"number": 1}, "repository": {"full_name": "someone/else"}}
    assert _hooks(db, github, []).handle(*_signed(payload, "issues")).status == 202


def test_a_ping_is_answered(db, github):
    assert (
        _hooks(db, github, [])
        .handle(*_signed({"zen": "Keep it logically awesome."}, "ping"))
        .status
        == 204
    )


def test_the_watch_says_an_unshaped_issue_once_and_edits_it_when_the_reason_changes(
    db, github, forge
):
    number = github.add_issue("Greet", "no sections at all", hook=False)
    forge.intake.poll()
    assert forge.watch.run_once().said == 1
    assert forge.watch.run_once().said == 0  # the same reason: nothing sent
    (comment,) = github.comments_on(number)
    assert (
        "no ## Boundary section" in comment["body"] and "no ## Criteria section" in comment["body"]
    )
    github.edit_issue(number, body="## Boundary\n- src/app.py\n", hook=False)
    forge.intake.poll()
    assert forge.watch.run_once().said == 1
    (edited,) = github.comments_on(number)
    assert edited["id"] == comment["id"] and "no ## Boundary" not in edited["body"]
    github.edit_issue(number, body=BODY, hook=False)
    forge.intake.poll()
    assert forge.watch.run_once().said == 0
    assert len(github.comments_on(number)) == 1


def test_the_token_is_in_no_row_of_the_store(db, github, forge, hive_db_url):
    import psycopg

    github.add_issue("Greet", BODY, hook=False)
    forge.intake.poll()
    forge.watch.run_once()
    with psycopg.connect(hive_db_url) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'hive'"
            )
        ]
        for table in tables:
            dump = conn.execute(f"SELECT to_jsonb(t)::text FROM hive.{table} t").fetchall()
            assert all(TOKEN not in row[0] for row in dump), table


def test_the_watch_says_escalated_work_once(db, github, forge, hive_db_url):
    import uuid

    import psycopg

    number = github.add_issue("Greet", BODY, hook=False)
    forge.intake.poll()
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
            " finished_at, outcome, outcome_code, review_state, review_note)"
            " VALUES (%s, %s, 'main', true, %s, now(), 'finished', 'finished', 'escalate', %s)",
            (number, f"queen-{number}", uuid.uuid4(), "criterion 1 cannot be judged"),
        )
    assert forge.watch.run_once().said == 1
    assert forge.watch.run_once().said == 0
    (comment,) = github.comments_on(number)
    assert "escalated" in comment["body"] and "criterion 1 cannot be judged" in comment["body"]
    assert "<!-- hive:escalated -->" in comment["body"]


def test_the_watch_says_the_shape_rules_reason_for_a_boundary_that_names_no_file(
    db, github, forge, queen_checkout
):
    from hive.forge.github.watch import Watch
    from hive.forge.github.wiring import BaseShape

    watch = Watch(db, forge.repo, "hive", shape=BaseShape(queen_checkout, "main"))
    body = BODY.replace("src/app.py`\n", "nowhere/app.py`\n", 1)
    number = github.add_issue("Greet", body, hook=False)
    forge.intake.poll()
    assert watch.run_once().said == 1
    (comment,) = github.comments_on(number)
    assert (
        "'nowhere/app.py' names no file at base and its directory does not exist" in comment["body"]
    )
    assert watch.run_once().said == 0


def test_an_issue_with_repeated_paths_and_criteria_is_edited_once_not_every_poll(db, github, forge):
    body = BODY + "- file `src/app.py` contains `hello`\n"
    number = github.add_issue(
        "Greet", body.replace("- `src/app.py`", "- `src/app.py`\n- `./src/app.py`"), hook=False
    )
    assert [r.did for r in forge.intake.poll().results] == [Synced.NEW]
    issue = issues.get(db, number)
    assert issue.boundary == ["src/app.py"] and len(issue.criteria) == 1
    github.edit_issue(number, title="Greet again", hook=False)
    assert [r.did for r in forge.intake.poll().results] == [Synced.EDITED]
    assert forge.intake.sync(github.state.issues[number]).did == Synced.SAME


def test_a_boundary_of_seven_thousand_paths_is_refused_with_a_sentence(db, github, forge):
    paths = "\n".join(f"- f{n}" for n in range(7000))  # 55 KB: under the body's bound
    number = github.add_issue("Huge", f"Big.\n\n## Boundary\n{paths}\n", hook=False)
    (result,) = forge.intake.poll().results
    assert result.did == Synced.REFUSED
    assert result.reason == "boundary: 7000 items, at most 100 (duplicates count once)"
    assert issues.get(db, number) is None


def test_an_author_pays_for_their_issue_and_the_watch_says_once_when_they_hold_nothing(
    db, github, forge
):
    number = github.add_issue("Greet", BODY, hook=False)  # written by "someone"
    forge.intake.poll()
    issue = issues.get(db, number)
    assert issue is not None and issue.account == "someone"
    assert AccountOf(db, "ops")(issue) == ("someone", 0)
    forge.watch.credit = AccountOf(db, "ops")
    assert forge.watch.run_once().said == 1
    assert forge.watch.run_once().said == 0  # said once
    (comment,) = github.comments_on(number)
    assert no_credit_sentence("someone", 0) in comment["body"]
    credits.grant(db, "someone", 10, Decimal(30), now=datetime.now(UTC))
    assert forge.watch.run_once().said == 1
    (edited,) = github.comments_on(number)
    assert edited["id"] == comment["id"]
    assert "The account someone holds credit again" in edited["body"]
    assert forge.watch.run_once().said == 0
    other = github.add_issue("Other", BODY, hook=False)
    forge.intake.poll()
    assert forge.watch.run_once().said == 0  # someone holds credit: nothing to say
    assert github.comments_on(other) == []


def test_an_issue_closed_by_its_merge_stays_closed_while_github_holds_it_open(db, github, forge):
    number = github.add_issue("Greet", BODY, hook=False)
    forge.intake.poll()
    with db.connection() as conn:
        conn.execute(
            "UPDATE hive.queen_issue SET state = 'closed', closed_reason = 'merged as abc',"
            " closed_code = 'merged', closed_at = now() WHERE number = %s",
            (number,),
        )
    github.edit_issue(number, title="Greet again", hook=False)  # open, labelled, newer
    assert [r.did for r in forge.intake.poll().results] == [Synced.SAME]
    issue = issues.get(db, number)
    assert issue is not None and issue.state == IssueState.CLOSED
    assert issue.closed_code is ClosedCode.MERGED
