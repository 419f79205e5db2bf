"""Credits in the running hive (HIVE_CREDITS=on): a bee's turn is sold to its issue's
account with its ending, whoever lent the key; an account at zero gets no new order,
with a sentence in the round's report and in `hive why`; a running turn finishes and
overdraws by at most its own sale; a grant wakes the Queen at once."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from decimal import Decimal

from prometheus_client import generate_latest

from hive import configs
from hive.actors.queen.queen import Queen
from hive.rules.credits import no_credit_sentence
from hive.runtime import queen_ports
from hive.services import history
from hive.store import credits, orders, reports
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import AGENT, add_issue
from tests.live.runtime.test_runner import claimer_of

ON = {
    "CREDITS": "on",
    "QUEEN_BEES_RUN_ELSEWHERE": "on",
    "AGENT": AGENT + "reports_cost",
    "WORKER_LANES_PER_KEY": "4",
}
SALE = 300  # reports_cost: $0.75, sold at twice its cost in half cents
DEADLINE_SECONDS = 30.0


def queen_of(rt) -> Queen:
    return Queen(queen_ports(rt), configs.queen_config(rt.settings), lambda: None)


def balance(rt, account: str) -> int:
    return credits.book(rt.db, account, datetime.now(UTC)).balance


def sold_metric(rt, kind: str) -> float:
    for line in generate_latest(rt.metrics.registry).decode().splitlines():
        if line.startswith(f'hive_credit_tokens_total{{kind="{kind}"}}'):
            return float(line.split()[-1])
    raise AssertionError(f"no hive_credit_tokens_total of kind {kind}")


def test_a_runners_turn_is_sold_to_its_issues_account_and_the_lender_earns_nothing(
    make_runtime,
):
    rt = make_runtime(**ON, WORKER_KEY_OWNERS="alice")
    add_issue(rt.db, 1, account="team")
    credits.grant(rt.db, "team", 1000, Decimal(30))
    assert queen_of(rt).run_once().dispatched == (1,)
    order = orders.get(rt.db, 1)
    assert order is not None and order.credit_account == "team" and order.key_owner == "alice"
    assert claimer_of(rt).run_once().started == (1,)
    assert wait_for_ending(rt.db, 1).outcome == "finished"
    assert balance(rt, "team") == 1000 - SALE
    assert balance(rt, "alice") == 0 and credits.history(rt.db, "alice") == []
    (sale,) = credits.sales_of_issue(rt.db, 1)
    assert (sale["account"], sale["tokens"], sale["key_owner"]) == ("team", SALE, "alice")
    rt.metrics.watch_credits(lambda: credits.sums(rt.db))
    assert sold_metric(rt, "sold") == SALE and sold_metric(rt, "granted") == 1000


def test_an_issue_without_an_account_is_paid_by_the_default_one(make_runtime):
    rt = make_runtime(**ON, CREDIT_DEFAULT_ACCOUNT="ops")
    add_issue(rt.db, 1)
    credits.grant(rt.db, "ops", 500, Decimal(30))
    assert queen_of(rt).run_once().dispatched == (1,)
    assert claimer_of(rt).run_once().started == (1,)
    wait_for_ending(rt.db, 1)
    assert balance(rt, "ops") == 500 - SALE


def test_an_account_at_zero_gets_no_new_order_and_says_why(make_runtime):
    rt = make_runtime(**ON)
    add_issue(rt.db, 1, account="team")
    add_issue(rt.db, 2, account="rich", boundary=("docs/notes.md",))
    credits.grant(rt.db, "rich", 10, Decimal(30))
    result = queen_of(rt).run_once()
    assert result.dispatched == (2,) and result.needs_you
    said = no_credit_sentence("team", 0)
    assert (1, said) in result.skipped
    (report,) = reports.latest(rt.db, limit=1)
    assert f"#1: {said}" in report.body and report.needs_you
    assert any(said in s.text for s in history.why(rt.db, 1))
    assert orders.get(rt.db, 1) is None
    credits.grant(rt.db, "team", 5, Decimal(30))
    assert queen_of(rt).run_once().dispatched == (1,)


def test_a_running_turn_finishes_and_overdraws_by_at_most_its_own_sale(make_runtime):
    rt = make_runtime(**ON)
    add_issue(rt.db, 1, account="team")
    add_issue(rt.db, 2, account="team", boundary=("docs/notes.md",))
    credits.grant(rt.db, "team", 100, Decimal(30))
    queen = queen_of(rt)
    assert queen.run_once().dispatched == (1, 2)  # both start while it holds tokens
    claimer = claimer_of(rt, slots=2)
    assert claimer.run_once().started == (1, 2)
    wait_for_ending(rt.db, 1)
    wait_for_ending(rt.db, 2)
    assert balance(rt, "team") == 100 - 2 * SALE
    overdrawn = [s["overdrawn"] for s in credits.history(rt.db, "team") if s["kind"] == "sale"]
    assert sorted(overdrawn) == [200, SALE]  # each at most its own sale
    assert all(o <= SALE for o in overdrawn)
    add_issue(rt.db, 3, account="team", boundary=("README.md",))
    result = queen.run_once()
    assert result.dispatched == ()
    assert (3, no_credit_sentence("team", 100 - 2 * SALE)) in result.skipped
    credits.grant(rt.db, "team", 1000, Decimal(30))  # pays what is owed first
    assert balance(rt, "team") == 1100 - 2 * SALE
    assert queen.run_once().dispatched == (3,)


def test_a_grant_wakes_the_queen_at_once(hive_tree):
    """The Queen rounds every 10 minutes here: only the grant's NOTIFY can start the
    round that dispatches the issue."""
    hive = hive_tree(AGENT + "finish", CREDITS="on", QUEEN_TICK_SECONDS="600")
    db = hive.runtime.db
    add_issue(db, 1, account="team")
    said = f"#1: {no_credit_sentence('team', 0)}"
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not any(said in r.body for r in reports.latest(db, limit=5)):
        assert time.monotonic() < deadline, "no round said the account is at zero"
        time.sleep(0.05)  # a poll of the table, not a synchronisation
    credits.grant(db, "team", 50, Decimal(30))
    assert wait_for_ending(db, 1, timeout_seconds=DEADLINE_SECONDS).outcome == "finished"
    # the tree reads the metric from the ledger: the unpriced turn was sold at 1 token
    assert sold_metric(hive.runtime, "granted") == 50 and sold_metric(hive.runtime, "sold") == 1
