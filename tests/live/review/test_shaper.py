"""The shaper (DESIGN 11) on a real PostgreSQL, real git and real processes: an issue
that fails the shape gate gets a proposal the shape rule checks; `ask` waits for its
author (`show`, `accept`), `apply` applies it with a sentence; a refused proposal says
why; a shaper that cannot run has the reviewer's floor."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from prometheus_client import generate_latest

from hive.actors.reviewer.config import ReviewerConfig
from hive.actors.shaper import Shaper
from hive.git.facts import base_facts
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from hive.rules.credits import Terms
from hive.rules.shape import shape_problem
from hive.rules.spend import day_start
from hive.services import changes, history, shaping
from hive.services.standing import NotNow
from hive.store import credits, issues, shapes, spend
from hive.store.issues import NewIssue
from hive.store.people import IssueChange

pytestmark = pytest.mark.live

BODY = "Greet in French too.\n\nappend `docs/french.md`: Bonjour\n"


def _issue(db: Any, body: str = BODY, **fields: Any) -> int:
    made = issues.create(db, NewIssue(title="French", body=body, **fields))
    return made.number


def _shaper(
    db: Any, checkout: Checkout, agent: str = "demo", mode: str = "ask", **cfg: Any
) -> Shaper:
    config = ReviewerConfig(failure_pause_seconds=1, **cfg)
    return Shaper(db, checkout, HiveMetrics(), agent, mode, config)


def _is_work(db: Any, checkout: Checkout, number: int) -> bool:
    issue = issues.get(db, number)
    assert issue is not None
    facts = base_facts(checkout.repo, checkout.base)
    problem = shape_problem(
        issue.labels, issue.boundary, issue.body, facts.files, facts.dirs, facts.symlinks
    )
    return problem is None and bool(issue.criteria)


def test_ask_shows_the_proposal_and_accepting_it_makes_the_issue_work(
    db: Any, queen_checkout: Checkout
) -> None:
    number = _issue(db)
    shaper = _shaper(db, queen_checkout)
    assert shaper.run_once().issue == number
    shape = shapes.get(db, number)
    assert shape is not None and shape.state == shapes.PENDING
    assert shape.boundary == ("docs/french.md",)
    assert shape.criteria == ("file `docs/french.md` contains `Bonjour`",)
    shown = shaping.show(db, number)
    assert "The shaper proposes" in shown and "hive issue accept-shape" in shown
    assert not shaper.run_once()  # answered: not shaped again
    assert not _is_work(db, queen_checkout, number)
    said = shaping.accept(db, number, "ann")
    assert said.startswith(f"#{number}: the shaper's proposal was accepted by ann")
    assert _is_work(db, queen_checkout, number)
    issue = issues.get(db, number)
    assert issue is not None and "## Boundary" in issue.body
    with pytest.raises(NotNow, match="no proposal of the shaper to accept"):
        shaping.accept(db, number, "ann")
    assert any(s.text.startswith("shaper (applied)") for s in history.why(db, number))


def test_apply_applies_at_once_with_a_sentence_and_work_is_left_alone(
    db: Any, queen_checkout: Checkout
) -> None:
    work = _issue(db, "x", boundary=("README.md",), criteria=("c",))
    number = _issue(db)
    shaper = _shaper(db, queen_checkout, mode="apply")
    assert shaper.run_once().state == shapes.APPLIED
    assert _is_work(db, queen_checkout, number)
    assert shapes.get(db, work) is None
    shape = shapes.get(db, number)
    assert shape is not None and shape.note.startswith("shaped by the hive (no boundary")


def test_a_proposal_that_escapes_the_repository_is_refused_with_its_reason(
    db: Any, queen_checkout: Checkout
) -> None:
    number = _issue(db, "no sections")
    lines = "HIVE-SHAPE-BOUNDARY: ../etc/passwd; echo HIVE-SHAPE-CRITERION: it is read"
    shaper = _shaper(db, queen_checkout, agent=f"command:echo {lines}", mode="apply")
    shaper.run_once()
    shape = shapes.get(db, number)
    assert shape is not None and shape.state == shapes.REFUSED
    assert "'../etc/passwd' climbs out with '..'" in shape.note
    assert not _is_work(db, queen_checkout, number)


def test_a_shaper_that_cannot_run_waits_doubling_then_leaves_it_to_a_person(
    db: Any, queen_checkout: Checkout, hive_db_url: str
) -> None:
    number = _issue(db)
    shaper = _shaper(db, queen_checkout, agent="command:exit 3")
    shaper.run_once()
    shape = shapes.get(db, number)
    assert shape is not None and (shape.state, shape.failures) == (shapes.WAITING, 1)
    assert shape.note.startswith("the shaper did not finish (ended badly)")
    assert not shaper.run_once()  # its pause has not passed
    for failures in (2, 3):
        with psycopg.connect(hive_db_url, autocommit=True) as conn:
            conn.execute("UPDATE hive.queen_shape SET retry_at = now() - interval '1 s'")
        shaper.run_once()
        shape = shapes.get(db, number)
        assert shape is not None and shape.failures == failures
    assert shape.state == shapes.FAILED
    assert "so a person decides (write the issue's boundary and criteria" in shape.note
    assert not shaper.run_once()


def test_an_issue_edited_since_is_shaped_again(db: Any, queen_checkout: Checkout) -> None:
    number = _issue(db, "nothing to go on")
    shaper = _shaper(db, queen_checkout)
    shaper.run_once()
    first = shapes.get(db, number)
    assert first is not None and first.state == shapes.WAITING  # no proposal: a failure
    assert first.note.startswith("the shaper gave no proposal")
    changes.edit(db, number, IssueChange(boundary=["nowhere/x.md"]))
    assert shaper.run_once().issue == number  # another problem: shaped again at once


def test_with_credits_on_each_shaping_turn_is_sold_to_the_issues_account(
    db: Any, queen_checkout: Checkout
) -> None:
    number = _issue(db, account="team")
    config = ReviewerConfig(failure_pause_seconds=1)
    terms = Terms(Decimal(2), Decimal(30), "ops")
    shaper = Shaper(db, queen_checkout, HiveMetrics(), "demo", "ask", config, credit_terms=terms)
    assert shaper.run_once().issue == number
    (sale,) = credits.sales_of_issue(db, number)
    assert sale["account"] == "team" and sale["turn"].startswith(f"shape:{number}:")
    assert (sale["tokens"], sale["cost_micros"]) == (1, None)  # the demo shaper: unpriced
    assert _shaper(db, queen_checkout).credit_terms is None  # credits off: nothing sold


def test_a_shaping_turns_spend_and_its_sale_are_written_in_one_transaction(
    db: Any, queen_checkout: Checkout
) -> None:
    number = _issue(db, account="team")
    usage = "HIVE-USAGE: provider=acme model=m input=100 output=20 cost_usd=0.25"
    config = ReviewerConfig(failure_pause_seconds=1)
    terms = Terms(Decimal(2), Decimal(30), "ops")
    agent = f"command:echo '{usage}'"
    shaper = Shaper(db, queen_checkout, HiveMetrics(), agent, "ask", config, credit_terms=terms)
    assert shaper.run_once().issue == number
    # the same xmin: one transaction wrote both, so a crash cannot keep one without the other
    with db.connection() as conn:
        (spent,) = conn.execute(
            "SELECT xmin::text FROM hive.turn_spend WHERE issue = %s", (number,)
        ).fetchall()
        (sold,) = conn.execute(
            "SELECT xmin::text FROM hive.queen_credit_ledger WHERE kind = 'sale' AND issue = %s",
            (number,),
        ).fetchall()
    assert spent == sold


def test_a_shaping_turns_spend_counts_in_the_days_spend_and_the_issues(
    db: Any, queen_checkout: Checkout
) -> None:
    number = _issue(db)
    usage = "HIVE-USAGE: provider=acme model=m input=100 output=20 cost_usd=0.25"
    shaper = _shaper(db, queen_checkout, agent=f"command:echo '{usage}'")
    assert shaper.run_once().issue == number  # no proposal: a failure, its turn spent
    today = day_start(datetime.now(UTC))
    (key,) = spend.by_key_since(db, today)
    assert (key.key_index, key.attempts, key.cost_usd) == (None, 1, 0.25)  # no keys set
    assert (key.input_tokens, key.output_tokens) == (100, 20)
    assert spend.of_issue(db, number).cost_usd == 0.25
    metric = 'hive_spend_usd_total{key_index="none"} 0.25'
    assert metric in generate_latest(shaper.metrics.registry).decode().splitlines()


def test_a_shaping_turn_that_reported_no_usage_counts_as_an_unpriced_turn(
    db: Any, queen_checkout: Checkout
) -> None:
    number = _issue(db)
    shaper = _shaper(db, queen_checkout, agent="command:true")  # no usage, no proposal
    assert shaper.run_once().issue == number
    spent = spend.of_issue(db, number)
    assert (spent.attempts, spent.unpriced, spent.cost_usd) == (1, 1, 0.0)
    assert (spent.input_tokens, spent.output_tokens) == (0, 0)
