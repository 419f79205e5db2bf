import multiprocessing
from collections import Counter

from hive.store import orders

from . import workers
from .conftest import queue, running

RUNNERS = 8
TRIALS = 100
DRAIN_ORDERS = 2000
_ctx = multiprocessing.get_context("spawn")


def _join(procs):
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0, f"{p.name} exited {p.exitcode}"


def test_eight_runners_reaching_for_one_row_exactly_one_gets_it_every_time(conn, hive_db_url):
    barrier, results = _ctx.Barrier(RUNNERS + 1), _ctx.Queue()
    procs = [
        _ctx.Process(target=workers.race, args=(hive_db_url, f"r{i}", TRIALS, barrier, results))
        for i in range(RUNNERS)
    ]
    winners = Counter()
    with running(procs):
        for trial in range(1, TRIALS + 1):
            queue(conn, trial)
            barrier.wait(timeout=60)
            got = [results.get(timeout=60) for _ in range(RUNNERS)]
            won = [(name, issue) for name, issue in got if issue is not None]
            assert len(won) == 1 and won[0][1] == trial, f"trial {trial}: {got}"
            assert orders.get(conn, trial).claimed_by == won[0][0]
            winners[won[0][0]] += 1
        _join(procs)
    assert sum(winners.values()) == TRIALS


def test_eight_runners_draining_two_thousand_orders_claim_each_exactly_once(conn, hive_db_url):
    with conn.transaction():
        for issue in range(1, DRAIN_ORDERS + 1):
            queue(conn, issue)
    barrier, results = _ctx.Barrier(RUNNERS), _ctx.Queue()
    procs = [
        _ctx.Process(target=workers.drain, args=(hive_db_url, f"r{i}", barrier, results))
        for i in range(RUNNERS)
    ]
    with running(procs):
        claimed = [issue for _ in procs for issue in results.get(timeout=120)]
        _join(procs)
    assert len(claimed) == DRAIN_ORDERS
    assert sorted(claimed) == list(range(1, DRAIN_ORDERS + 1))
    assert orders.listing(conn, unfinished_only=True) == []
    assert sum(1 for o in orders.listing(conn) if o.outcome == "finished") == DRAIN_ORDERS
