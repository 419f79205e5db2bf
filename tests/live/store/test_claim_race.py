from collections import Counter

from hive.store import orders

from . import workers
from .conftest import Child, finish, queue, ready_then_go, running

RUNNERS = 8
TRIALS = 100
DRAIN_ORDERS = 2000
BATCH_ORDERS = 700  # a hundred batches of seven
# every wait on a worker is bounded: a lost worker fails the test, never hangs it
WAIT_SECONDS = 60.0
DRAIN_SECONDS = 120.0


def test_eight_runners_reaching_for_one_row_exactly_one_gets_it_every_time(conn, hive_db_url):
    children = [
        Child(workers.race, hive_db_url, f"r{i}", TRIALS, name=f"r{i}") for i in range(RUNNERS)
    ]
    winners = Counter()
    with running(children):
        for child in children:
            assert child.receive(WAIT_SECONDS) == workers.READY
        for trial in range(1, TRIALS + 1):
            queue(conn, trial)
            for child in children:  # the barrier: every worker waits for this word
                child.send(workers.GO)
            got = [child.receive(WAIT_SECONDS) for child in children]
            won = [(name, issue) for name, issue in got if issue is not None]
            assert len(won) == 1 and won[0][1] == trial, f"trial {trial}: {got}"
            assert orders.get(conn, trial).claimed_by == won[0][0]
            winners[won[0][0]] += 1
        finish(children, WAIT_SECONDS)
    assert sum(winners.values()) == TRIALS


def test_eight_runners_draining_two_thousand_orders_claim_each_exactly_once(conn, hive_db_url):
    with conn.transaction():
        for issue in range(1, DRAIN_ORDERS + 1):
            queue(conn, issue)
    children = [Child(workers.drain, hive_db_url, f"r{i}", name=f"r{i}") for i in range(RUNNERS)]
    with running(children):
        ready_then_go(children, WAIT_SECONDS)
        claimed = [issue for child in children for issue in child.receive(DRAIN_SECONDS)]
        finish(children, WAIT_SECONDS)
    assert len(claimed) == DRAIN_ORDERS
    assert sorted(claimed) == list(range(1, DRAIN_ORDERS + 1))
    assert orders.listing(conn, unfinished_only=True) == []
    assert sum(1 for o in orders.listing(conn) if o.outcome == "finished") == DRAIN_ORDERS


def test_eight_runners_claiming_in_batches_of_seven_claim_each_order_exactly_once(
    conn, hive_db_url
):
    with conn.transaction():
        for issue in range(1, BATCH_ORDERS + 1):
            queue(conn, issue)
    children = [
        Child(workers.drain_batches, hive_db_url, f"r{i}", 7, name=f"r{i}") for i in range(RUNNERS)
    ]
    with running(children):
        ready_then_go(children, WAIT_SECONDS)
        claimed = [issue for child in children for issue in child.receive(DRAIN_SECONDS)]
        finish(children, WAIT_SECONDS)
    assert sorted(claimed) == list(range(1, BATCH_ORDERS + 1))
    assert orders.listing(conn, unfinished_only=True) == []
