"""A model reviewer (DESIGN 11): `HIVE_REVIEWER_AGENT=claude|codex` runs the REAL CLI
(installed by `make agents`) against the fake model APIs (fake_api.py,
fake_responses.py), on a real PostgreSQL and real git: an accept, a send-back, a reply
without a verdict for every criterion (a wait, not an accept), a crash three times
(escalated with its sentence) and a refused key (rested, as a bee's)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hive.actors.bee.ending import Accounting
from hive.actors.reviewer.reviewer import Reviewer, ReviewerConfig
from hive.agents.launch import Launch
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from hive.rules.keys import key_slots
from hive.services import history
from hive.store import keyrests, reviews
from tests.live.review.conftest import Finished, db, finished_work, queen_checkout  # noqa: F401

from .fake_api import FakeApi
from .fake_api import running as running_messages
from .fake_responses import INPUT_TOKENS, FakeResponses
from .fake_responses import running as running_responses
from .test_claude import claude  # noqa: F401 (the fixture: make agents)
from .test_codex import codex  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.live]

KEY = "sk-fake-reviewer-key-0000"
CONTAINS = "file `docs/a.md` contains `{}`"
CRITERIA = [CONTAINS.format("hello"), "the greeting is friendly"]
BOUND_SECONDS = 90.0


@pytest.fixture(scope="module")
def responses() -> Iterator[FakeResponses]:
    yield from running_responses()


@pytest.fixture(scope="module")
def messages() -> Iterator[FakeApi]:
    yield from running_messages()


def _row(url: str, issue: int) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        cur = conn.cursor(row_factory=psycopg.rows.dict_row)
        row = cur.execute(
            "SELECT review_state, review_note, review_failures,"
            " (SELECT sum(t.input_tokens) FROM hive.turn_spend t"
            "  WHERE t.issue = d.issue AND t.kind = 'review'"
            "  AND t.conversation_id = d.conversation_id) AS review_input_tokens,"
            " (SELECT sum(t.cost_usd) FROM hive.turn_spend t"
            "  WHERE t.issue = d.issue AND t.kind = 'review'"
            "  AND t.conversation_id = d.conversation_id) AS review_cost_usd"
            " FROM hive.queen_dispatch d WHERE issue = %s",
            (issue,),
        ).fetchone()
        assert row is not None
        return row


def _on_key(url: str, issue: int) -> None:
    """The attempt ran on the key (its review does too)."""
    (slot,) = key_slots({"HIVE_WORKER_KEY": KEY})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE hive.queen_dispatch SET key_index = %s, key_fingerprint = %s WHERE issue = %s",
            (slot.index, slot.fingerprint, issue),
        )


def _pause_passed(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_dispatch SET reviewed_at = now() - interval '1 hour'")


def _reviewer(
    db: Any,  # noqa: F811
    checkout: Checkout,
    agent: str,
    binary: Path,
    base_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Reviewer, HiveMetrics]:
    variable = "OPENAI_BASE_URL" if agent == "codex" else "ANTHROPIC_BASE_URL"
    monkeypatch.setenv(variable, base_url)
    config = ReviewerConfig(
        agent=agent,
        bound_seconds=BOUND_SECONDS,
        keys=key_slots({"HIVE_WORKER_KEY": KEY}),
        launch=Launch(pass_env=(variable,), agent_bin=str(binary)),
        accounting=Accounting.packaged(),
    )
    metrics = HiveMetrics()
    return Reviewer(db, checkout, metrics, lambda item: lambda: None, config), metrics


def _failures(metrics: HiveMetrics, reason: str) -> float:
    value = metrics.registry.get_sample_value("hive_review_failures_total", {"reason": reason})
    return 0.0 if value is None else value


def _sent(api: Any) -> str:
    """Everything the CLI sent the fake, as text (the brief is in there)."""
    return json.dumps(api.requests)


def test_codex_accepts_work_that_meets_every_criterion_and_its_usage_is_the_reviews_spend(
    db: Any,  # noqa: F811
    queen_checkout: Checkout,  # noqa: F811
    finished_work: Callable[..., Finished],  # noqa: F811
    hive_db_url: str,
    codex: Path,  # noqa: F811
    responses: FakeResponses,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    finished_work(1, {"docs/a.md": "hello world\n"}, CRITERIA)
    _on_key(hive_db_url, 1)
    responses.play(("text", "Looks good.\nHIVE-CRITERION: 1 met\nHIVE-CRITERION: 2 met"))
    reviewer, _ = _reviewer(db, queen_checkout, "codex", codex, responses.url, monkeypatch)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 1)
    assert (got["review_state"], got["review_failures"]) == ("accept", 0), got
    assert got["review_input_tokens"] == INPUT_TOKENS  # the review's spend, of its attempt
    sent = _sent(responses)
    assert "2. the greeting is friendly" in sent  # numbered criteria
    assert "+hello world" in sent  # the diff against base
    assert KEY not in sent


def test_claude_sends_back_with_its_reason_and_its_cost_is_the_reviews_spend(
    db: Any,  # noqa: F811
    queen_checkout: Checkout,  # noqa: F811
    finished_work: Callable[..., Finished],  # noqa: F811
    hive_db_url: str,
    claude: Path,  # noqa: F811
    messages: FakeApi,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    finished_work(2, {"docs/a.md": "hello you\n"}, CRITERIA)
    _on_key(hive_db_url, 2)
    messages.play(
        ("text", "HIVE-CRITERION: 1 met\nHIVE-CRITERION: 2 unmet: it says hello you, curtly")
    )
    reviewer, _ = _reviewer(db, queen_checkout, "claude", claude, messages.url, monkeypatch)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 2)
    assert got["review_state"] == "sendback", got
    assert got["review_note"] == "- the greeting is friendly: it says hello you, curtly"
    assert got["review_cost_usd"] is not None and got["review_cost_usd"] > 0


def test_a_reply_without_a_verdict_on_every_criterion_waits_and_is_no_accept(
    db: Any,  # noqa: F811
    queen_checkout: Checkout,  # noqa: F811
    finished_work: Callable[..., Finished],  # noqa: F811
    hive_db_url: str,
    codex: Path,  # noqa: F811
    responses: FakeResponses,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    finished_work(3, {"docs/a.md": "hello\n"}, CRITERIA)
    responses.play(("text", "HIVE-CRITERION: 1 met"))
    reviewer, metrics = _reviewer(db, queen_checkout, "codex", codex, responses.url, monkeypatch)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 3)
    assert (got["review_state"], got["review_failures"]) == ("wait", 1)
    assert got["review_note"].startswith("the reviewer gave no verdict on every criterion")
    assert _failures(metrics, "no_verdict") == 1


def test_a_reviewer_that_crashes_three_times_escalates_with_its_sentence(
    db: Any,  # noqa: F811
    queen_checkout: Checkout,  # noqa: F811
    finished_work: Callable[..., Finished],  # noqa: F811
    hive_db_url: str,
    codex: Path,  # noqa: F811
    responses: FakeResponses,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    finished_work(4, {"docs/a.md": "hello\n"}, CRITERIA)
    responses.play(("cut",))
    reviewer, metrics = _reviewer(db, queen_checkout, "codex", codex, responses.url, monkeypatch)
    for _ in range(3):
        _pause_passed(hive_db_url)
        reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 4)
    assert (got["review_state"], got["review_failures"]) == ("escalate", 3), got
    assert got["review_note"].startswith("the reviewer did not finish (ended badly")
    assert _failures(metrics, "crash") == 3
    said = history.why(db, 4)[0].text
    assert said.startswith("attempt 1 escalated: a person decides: the reviewer did not finish")


def test_a_refused_key_rests_as_a_bees_and_the_review_waits_for_it(
    db: Any,  # noqa: F811
    queen_checkout: Checkout,  # noqa: F811
    finished_work: Callable[..., Finished],  # noqa: F811
    hive_db_url: str,
    codex: Path,  # noqa: F811
    responses: FakeResponses,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    finished_work(5, {"docs/a.md": "hello\n"}, CRITERIA)
    _on_key(hive_db_url, 5)
    resets = int(time.time()) + 3600
    responses.play(("usage_limit", resets))
    reviewer, metrics = _reviewer(db, queen_checkout, "codex", codex, responses.url, monkeypatch)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 5)
    assert (got["review_state"], got["review_failures"]) == ("wait", 1), got
    assert got["review_note"].startswith("the provider refused the reviewer's key")
    assert _failures(metrics, "refused") == 1
    (rest,) = keyrests.resting(db)
    assert rest.key_index == key_slots({"HIVE_WORKER_KEY": KEY})[0].index
    assert rest.seconds_left > 3000  # until the reset, not 5 s
    _pause_passed(hive_db_url)
    asked = len(responses.requests)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 5)
    assert got["review_state"] == "wait" and got["review_failures"] == 1  # no failure
    assert got["review_note"].startswith("its key rests for ")
    assert len(responses.requests) == asked  # the resting key was not used
