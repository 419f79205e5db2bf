"""The Queen's round against the real store: one order per free key and capacity, a
refusal sentence when no key is free, shape failures reported, elsewhere mode runs
nothing, local mode starts the bee here, the lease, the bound and the drain."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import psycopg
import pytest

from hive import configs
from hive.actors.messages import CLAIMER, QUEEN, REAPER, BootReaped, OrderEnded, ReapAtBoot
from hive.actors.queen import facts
from hive.actors.queen.config import QueenConfig
from hive.actors.queen.queen import Queen
from hive.actors.work import Standing
from hive.rules.drain import WK_BEE
from hive.rules.keys import key_slots
from hive.rules.report import REPORT_REPEAT_SECONDS
from hive.rules.round import Limits, Stop, plan_round, render
from hive.rules.states import Outcome
from hive.runtime import queen_ports, reaper_ports
from hive.store import endings, issues, leases, orders, reports
from hive.store.orders import Fence
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import AGENT, Inbox, add_issue, eventually

LEASE_GONE = render(Stop.LEASE_GONE)
KEY_2 = {"WORKER_KEY_2": "second-key-0123456789"}


def queen_of(rt, **fields) -> Queen:
    config = configs.queen_config(rt.settings)
    return Queen(
        queen_ports(rt), QueenConfig(**{**config.__dict__, **fields}), free_memory=lambda: None
    )


def test_round_inserts_one_order_per_free_key_and_reports_the_rest_as_busy(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", **KEY_2)
    for number in (1, 2, 3):
        add_issue(rt.db, number, boundary=(f"src/new{number}.py",), body=f"add src/new{number}.py")
    result = queen_of(rt).run_once()
    assert result.dispatched == (1, 2)
    live = orders.listing(rt.db, unfinished_only=True)
    assert sorted(o.key_index for o in live) == [0, 1]
    assert result.refusals == (
        "every key is busy (2 keys x 1 lanes): add HIVE_WORKER_KEY_3 to run more bees at once",
    )
    assert reports.latest(rt.db, 1)[0].headline == "dispatched #1, #2"


def test_round_refuses_with_a_sentence_and_writes_no_row_when_no_key_is_free(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", WORKER_KEY="")
    add_issue(rt.db, 1)
    result = queen_of(rt).run_once()
    assert result.dispatched == ()
    assert orders.listing(rt.db) == []
    report = reports.latest(rt.db, 1)[0]
    assert report.headline == "no worker key is set: set HIVE_WORKER_KEY to run a bee"
    assert report.needs_you


def test_an_issue_that_fails_shape_is_skipped_with_its_reason_in_the_report(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1, boundary=("../etc/passwd",))
    add_issue(rt.db, 2, boundary=("src/app.py",))
    result = queen_of(rt).run_once()
    assert result.dispatched == (2,)
    report = reports.latest(rt.db, 1)[0]
    assert "#1: boundary path '../etc/passwd' climbs out with '..'" in report.body
    assert report.needs_you


@pytest.mark.through_pgbouncer
def test_elsewhere_mode_queues_the_order_with_its_brief_and_runs_nothing(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 7, body="make it so")
    queen_of(rt).run_once()
    order = orders.get(rt.db, 7)
    assert order is not None and order.queued_at is not None and order.claimed_by is None
    assert "make it so" in (order.brief or "") and "src/app.py" in (order.brief or "")
    assert order.key_fingerprint == key_slots(rt.settings.worker_keys)[0].fingerprint
    assert rt.host.running() == 0
    assert not (rt.settings.workdir / "queen-7").exists()


def test_local_mode_inserts_the_order_and_runs_the_bee_here_to_its_end(make_runtime):
    rt = make_runtime()
    add_issue(rt.db, 3)
    result = queen_of(rt).run_once()
    assert result.dispatched == (3,)
    order = wait_for_ending(rt.db, 3)
    assert order.queued_at is None and order.claimed_by is None
    assert order.outcome == "finished"
    assert (rt.settings.workdir / "queen-3" / "src/app.py").read_text() == "done by the bee of #3\n"


def test_capacity_is_bounded_by_max_workers_with_a_sentence(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", MAX_WORKERS="1", **KEY_2)
    add_issue(rt.db, 1, boundary=("src/app.py",))
    add_issue(rt.db, 2, boundary=("src/util.py",))
    result = queen_of(rt).run_once()
    assert result.dispatched == (1,)
    assert queen_of(rt).run_once().refusals == ("1 orders in flight: HIVE_MAX_WORKERS=1 reached",)


def test_a_second_queen_waits_while_the_first_holds_the_lease(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1)
    first, second = queen_of(rt, holder="queen-a"), queen_of(rt, holder="queen-b")
    assert first.run_once().dispatched == (1,)
    assert second.run_once().idle == "another Queen holds the lease"
    first.close()
    assert second.run_once().idle is None


def test_a_handed_back_issue_is_dispatched_again_and_its_row_archived(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_stopped")
    add_issue(rt.db, 4)
    queen = queen_of(rt)
    queen.run_once()
    first = orders.get(rt.db, 4)
    assert first is not None
    bees = [b for b in rt.work.items() if b.kind == WK_BEE]
    assert bees[0].hand_back()  # type: ignore[attr-defined]
    assert orders.get(rt.db, 4).outcome == "handed back"  # type: ignore[union-attr]
    assert queen.run_once().dispatched == (4,)
    again = orders.get(rt.db, 4)
    assert again is not None and again.attempt == 2 and again.finished_at is None
    assert [h.snapshot["outcome"] for h in orders.history(rt.db, 4)] == ["handed back"]


def test_a_round_past_its_bound_is_abandoned_and_lets_the_lease_go(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1)
    queen = queen_of(rt, round_max_seconds=0.3)
    with rt.checkout.lock:  # the round is stuck reading base
        result = queen.run_once()
    assert result.idle == "abandoned while reading base"
    eventually(lambda: not any(t.name == "queen-round" for t in threading.enumerate()))
    assert rt.metrics.rounds_stalled._value.get() == 1
    lease = leases.get(rt.db, leases.QUEEN_LEASE)
    assert lease is not None and lease.expires_at <= datetime.now(UTC)
    assert orders.listing(rt.db) == []  # the abandoned round dispatches nothing more


@pytest.mark.parametrize("elsewhere", ["on", "off"])
@pytest.mark.through_pgbouncer
def test_a_queen_whose_lease_another_queen_took_mid_round_dispatches_nothing(
    make_runtime, elsewhere
):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE=elsewhere, **KEY_2)
    add_issue(rt.db, 1, boundary=("src/app.py",))
    add_issue(rt.db, 2, boundary=("src/util.py",))
    queen = queen_of(rt, holder="queen-a")
    with ThreadPoolExecutor(1) as pool:
        with rt.checkout.lock:  # the round holds the lease, then waits to read base
            running = pool.submit(queen.run_once)
            mine = eventually(lambda: leases.get(rt.db, leases.QUEEN_LEASE))
            assert mine.holder == "queen-a"
            # her lease runs out and another Queen takes it over (the fence goes up)
            assert leases.release(rt.db, mine)
            theirs = leases.claim(rt.db, leases.QUEEN_LEASE, "queen-b", 180)
            assert theirs is not None and theirs.fence == mine.fence + 1
        result = running.result(timeout=60)
    assert result.dispatched == () and result.refusals == (LEASE_GONE,)  # not one more
    assert orders.listing(rt.db) == []
    assert reports.latest(rt.db, 1)[0].headline == LEASE_GONE
    assert rt.host.running() == 0 and rt.work.items() == []  # local mode: no bee started
    assert not (rt.settings.workdir / "queen-1").exists()


def test_a_bee_of_an_abandoned_round_writes_nothing_once_the_lease_was_let_go(
    make_runtime, hive_db_url
):
    from hive.store import pool

    rt = make_runtime()
    add_issue(rt.db, 1)
    queen = queen_of(rt, round_max_seconds=0.5)
    # the bundles table is locked: the bee's cut waits on the store (before its insert),
    # and the round waits for the bee past its bound
    with pool.connect(hive_db_url) as blocker, blocker.transaction() as tx:
        blocker.execute("LOCK TABLE hive.queen_bundle IN ACCESS EXCLUSIVE MODE")
        result = queen.run_once()
        assert result.idle == "abandoned while dispatching #1"
        raise psycopg.Rollback(tx)
    [bee] = [b for b in rt.work.items() if b.kind == WK_BEE]
    assert bee.wait(30)  # type: ignore[attr-defined]
    assert not bee.landed  # type: ignore[attr-defined]  # its insert was fenced out
    eventually(lambda: not any(t.name == "queen-round" for t in threading.enumerate()))
    assert orders.listing(rt.db) == []  # the dispatch in hand landed nothing


def test_during_a_drain_a_queen_that_would_start_a_bee_here_does_not_round(make_runtime):
    rt = make_runtime()
    add_issue(rt.db, 1)
    rt.work.begin_drain()
    assert queen_of(rt).run_once().idle == "draining"
    assert orders.listing(rt.db) == []


def test_during_a_drain_an_elsewhere_queen_rounds_only_while_something_holds(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1)
    rt.work.begin_drain()
    queen = queen_of(rt)
    assert queen.run_once().idle == "draining"
    held = Standing(WK_BEE, "a held bee")
    rt.work.add(held)
    assert queen.run_once().dispatched == (1,)


def test_an_order_ending_here_wakes_the_queen(make_runtime):
    rt = make_runtime()
    add_issue(rt.db, 5)
    queen = Inbox()
    rt.names.register(QUEEN, queen)
    queen_of(rt).run_once()
    wait_for_ending(rt.db, 5)
    assert queen.heard.wait(5)
    assert queen.messages() == [OrderEnded(5)]


def test_a_round_reports_what_changed_and_a_repeat_only_once_the_last_report_is_old(
    make_runtime,
):
    """Issue 28: a round whose report says what the last one said writes no row until
    that one is REPORT_REPEAT_SECONDS old; every round counts, and a new Queen's first
    round writes."""
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    now = [1000.0]
    queen = Queen(
        queen_ports(rt),
        configs.queen_config(rt.settings),
        free_memory=lambda: None,
        clock=lambda: now[0],
    )
    queen.run_once()
    queen.run_once()  # the same, at once
    assert [r.headline for r in reports.latest(rt.db, 5)] == ["nothing to dispatch"]
    now[0] += REPORT_REPEAT_SECONDS - 1
    queen.run_once()
    assert len(reports.latest(rt.db, 5)) == 1
    add_issue(rt.db, 1)  # something else to say
    queen.run_once()
    assert [r.headline for r in reports.latest(rt.db, 5)] == [
        "dispatched #1",
        "nothing to dispatch",
    ]
    queen.run_once()  # nothing to dispatch: it differs from the last one written
    now[0] += 1
    queen.run_once()
    assert [r.headline for r in reports.latest(rt.db, 5)][:2] == [
        "nothing to dispatch",
        "dispatched #1",
    ]
    assert len(reports.latest(rt.db, 9)) == 3
    now[0] += REPORT_REPEAT_SECONDS
    queen.run_once()  # the same, once the last is old
    assert len(reports.latest(rt.db, 9)) == 4
    assert rt.metrics.rounds._value.get() == 7
    queen.close()
    queen_of(rt).run_once()  # another Queen (a restart): her first round writes
    assert len(reports.latest(rt.db, 9)) == 5


def test_the_boot_reaper_waits_for_the_lease_then_runs_before_the_first_decision(make_runtime):
    from hive.actors.reaper.reaper import Reaper
    from tests.live.runtime.test_reaper import local_order

    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    local_order(rt, 1)  # the order of a bee the previous Queen ran herself
    held = leases.claim(rt.db, leases.QUEEN_LEASE, "the-live-queen", 180)
    assert held is not None
    reaper, asked, told = Reaper(reaper_ports(rt), rt.reaper), Inbox(), Inbox()
    rt.names.register(REAPER, asked)
    rt.names.register(QUEEN, told)
    config = configs.queen_config(rt.settings)
    standby = Queen(queen_ports(rt), config, free_memory=lambda: None, reaps_at_boot=True)
    assert standby.run_once().idle == "another Queen holds the lease"
    assert asked.messages() == []  # a standby never asks for it
    leases.release(rt.db, held)
    assert standby.run_once().idle == "waiting for the boot reaper"
    assert asked.messages() == [ReapAtBoot()]
    assert orders.get(rt.db, 1).finished_at is None  # type: ignore[union-attr]
    reaper.ask_boot()  # the reaper's actor, told ReapAtBoot
    reaper.run_once()  # its pass, on its own thread
    assert told.messages() == [BootReaped((1,))]
    standby.boot_reaped()  # the Queen's actor, told BootReaped
    assert standby.run_once().dispatched == (1,)  # reaped first, so free again at once
    assert [h.snapshot["outcome"] for h in orders.history(rt.db, 1)] == ["reaped at boot"]
    assert rt.metrics.reaped.labels(reaper="boot")._value.get() == 1


def test_two_issues_on_one_file_never_run_at_once_even_in_one_round(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", **KEY_2)
    add_issue(rt.db, 1, boundary=("src/app.py",))
    add_issue(rt.db, 2, boundary=("src/util.py", "src/app.py"))
    result = queen_of(rt).run_once()
    assert result.dispatched == (1,)
    assert (2, "skipped: its boundary overlaps files another order holds: src/app.py") in (
        result.skipped
    )
    assert not reports.latest(rt.db, 1)[0].needs_you  # a hold passes on its own
    assert queen_of(rt).run_once().dispatched == ()  # held by #1's live order now


def end_as(rt, issue: int, outcome: Outcome) -> None:
    """End `issue`'s unclaimed order as a runner's bee would have, with `outcome`."""
    order = orders.get(rt.db, issue)
    assert order is not None
    assert endings.end(
        rt.db, endings.OrderEnding(Fence(issue, order.conversation_id, None), outcome)
    )


def test_a_key_rests_after_a_transient_refusal_and_the_next_key_is_used(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", **KEY_2)
    add_issue(rt.db, 1, boundary=("src/app.py",))
    add_issue(rt.db, 2, boundary=("src/util.py",))
    queen = queen_of(rt)
    assert queen.run_once().dispatched == (1, 2)
    refused_key = orders.get(rt.db, 1).key_index  # type: ignore[union-attr]
    end_as(rt, 1, Outcome.REFUSED)  # a rate limit: the provider will take it again soon
    result = queen.run_once()
    # the other key is busy with #2 and this one rests its first 5 s
    assert result.dispatched == ()
    assert result.refusals[0].startswith(
        f"every free key rests after its provider refused a turn: key {refused_key} for "
    )
    end_as(rt, 2, Outcome.FINISHED)
    again = queen.run_once()
    assert again.dispatched == (1,)
    assert orders.get(rt.db, 1).key_index != refused_key  # type: ignore[union-attr]


def test_a_quota_refusal_rests_its_key_for_the_quota_rest_and_another_ending_clears_it(
    make_runtime,
):
    from hive.store import keyrests

    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    key = key_slots(rt.settings.worker_keys)[0]
    add_issue(rt.db, 1)
    queen_of(rt).run_once()
    end_as(rt, 1, Outcome.QUOTA_EXHAUSTED)
    (rest,) = keyrests.resting(rt.db)
    assert (rest.key_index, rest.strikes, rest.reason) == (0, 1, "quota exhausted")
    assert 3590 < rest.seconds_left <= 3600  # HIVE_QUOTA_REST_SECONDS: no reset time given
    add_issue(rt.db, 2, boundary=("src/util.py",))
    queen_of(rt).run_once()
    assert orders.get(rt.db, 2) is None  # the one key rests
    # an order that was already out on that key finishes: the account works again
    new = orders.NewOrder(
        3,
        "queen-3",
        "main",
        key_index=0,
        key_fingerprint=key.fingerprint,
        owned_paths=("docs/notes.md",),
    )
    assert orders.insert(rt.db, new, queued=True) is orders.Insertion.WRITTEN
    end_as(rt, 3, Outcome.FINISHED)
    assert keyrests.resting(rt.db) == []
    assert queen_of(rt).run_once().dispatched == (1,)  # the key works: the first goes again


def test_the_queen_asks_for_the_boot_reap_each_round_until_it_ran_and_never_after(
    make_runtime,
):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1)
    asked = Inbox()
    rt.names.register(REAPER, asked)
    config = configs.queen_config(rt.settings)
    queen = Queen(queen_ports(rt), config, free_memory=lambda: None, reaps_at_boot=True)
    # a boot reap that met a store blip answers nothing: she asks again next round, or
    # the orders the last Queen ran here would stay unfinished for hours
    assert queen.run_once().idle == "waiting for the boot reaper"
    assert queen.run_once().idle == "waiting for the boot reaper"
    assert asked.messages() == [ReapAtBoot(), ReapAtBoot()]
    assert orders.get(rt.db, 1) is None  # nothing decided before it ran
    queen.boot_reaped()
    assert queen.run_once().dispatched == (1,)
    queen.run_once()
    assert asked.messages() == [ReapAtBoot(), ReapAtBoot()]  # once it ran, never again


def test_a_local_bee_still_starting_when_the_round_stops_waiting_holds_its_files(
    make_runtime, hive_db_url, monkeypatch
):
    # the round waits START_WAIT_SECONDS for a bee's row; a bee slower than that (the git
    # lock or the store is busy) may land yet, so its files and key stay taken this round
    import hive.actors.queen.dispatch as dispatch_module
    from hive.store import pool
    from hive.store.orders import NewOrder

    monkeypatch.setattr(dispatch_module, "START_WAIT_SECONDS", 0.5)
    rt = make_runtime(**KEY_2)
    add_issue(rt.db, 1, boundary=("src/app.py",))
    add_issue(rt.db, 2, boundary=("src/app.py",))
    # an uncommitted row of issue 1: the bee's insert (its ledger) waits behind it
    with pool.connect(hive_db_url) as blocker, blocker.transaction() as tx:
        orders.insert(blocker, NewOrder(1, "queen-1", "main"), queued=True)
        result = queen_of(rt).run_once()
        raise psycopg.Rollback(tx)
    assert result.dispatched == (1,)
    assert orders.get(rt.db, 2) is None  # never two orders on one file
    assert wait_for_ending(rt.db, 1).outcome == "finished"


def test_a_local_bee_that_cannot_start_does_not_wake_the_queen_into_a_busy_loop(make_runtime):
    rt = make_runtime(AGENT="python:tests.live.runtime.no_such_module:turn")
    add_issue(rt.db, 9)
    queen, claimer = Inbox(), Inbox()
    rt.names.register(QUEEN, queen)
    rt.names.register(CLAIMER, claimer)
    result = queen_of(rt).run_once()
    assert result.dispatched == ()
    assert claimer.heard.wait(5)  # the bee's last word: its slot is free
    assert orders.get(rt.db, 9) is None  # the Queen's row is written only once it starts
    # woken, the Queen would round again at once, fail again, and so on ~100 times a
    # second; the next try waits for the tick
    assert queen.messages() == []
    assert "could not start" in reports.latest(rt.db, 1)[0].body


def test_the_next_round_scans_the_keys_from_just_after_the_last_one_used(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", **KEY_2)
    add_issue(rt.db, 1, boundary=("src/app.py",))
    queen = queen_of(rt)
    assert queen.run_once().dispatched == (1,)
    assert orders.get(rt.db, 1).key_index == 0  # type: ignore[union-attr]
    end_as(rt, 1, Outcome.FINISHED)
    add_issue(rt.db, 2, boundary=("src/util.py",))
    assert queen.run_once().dispatched == (2,)  # both keys free: the scan starts after 0
    assert orders.get(rt.db, 2).key_index == 1  # type: ignore[union-attr]


# (issue, open, minutes since its end (None: in flight), outcome, review state, failures):
# an ended order of each kind, on an open issue and on a closed one, recent and old
_HISTORY = [
    (10, True, None, None, None, 0),
    (11, False, None, None, None, 0),  # closed while its bee still runs: holds its files
    (12, False, 5, "finished", None, 0),  # awaiting review: holds for 30 minutes
    (13, False, 150, "finished", None, 0),
    (14, False, 30, "finished", "sendback", 0),  # holds for two hours, floor at one
    (15, False, 90, "finished", "sendback", 0),  # past its floor: released this round
    (16, False, 180, "finished", "sendback", 0),
    (17, False, 600, "finished", "accept", 0),  # merged long ago: not read any more
    (18, False, 600, "finished", "escalate", 0),
    (19, False, 600, "finished", "empty", 0),
    (20, False, 420, "finished", "wait", 0),  # past the six-hour floor of WAIT
    (21, False, 60, "finished", "wait", 0),
    (22, False, 900, "finished", "released", 0),
    (23, False, 700, "ended badly", None, 2),
    (24, True, 1, "ended badly", None, 2),  # backing off
    (25, True, 600, "finished", "sendback", 1),  # its note goes in the next brief
    (26, True, 600, "finished", "accept", 0),
    (27, True, 20, "finished", None, 0),
    (28, True, 300, "handed back", None, 0),
    (29, False, 20, "finished", "escalate", 0),
]
_CODES = {"finished": "finished", "ended badly": "ended_badly", "handed back": "handed_back"}


def _history(rt) -> None:
    """The orders of `_HISTORY`, each owning `src/cN.py`, and an open issue without one
    on each of those files (held or not by the order)."""
    for issue, is_open, minutes, outcome, review, failures in _HISTORY:
        add_issue(rt.db, issue, boundary=(f"src/c{issue}.py",), body=f"add src/c{issue}.py")
        new = orders.NewOrder(issue, f"queen-{issue}", "main", owned_paths=(f"src/c{issue}.py",))
        assert orders.insert(rt.db, new, queued=True) is orders.Insertion.WRITTEN
        with rt.db.connection() as conn:
            conn.execute(
                "UPDATE hive.queen_dispatch SET key_index = 0, failures_in_a_row = %s,"
                " created_at = now() - make_interval(mins => %s) WHERE issue = %s",
                (failures, (minutes or 0) + 1000 - issue, issue),
            )
            if minutes is not None:
                conn.execute(
                    "UPDATE hive.queen_dispatch"
                    " SET finished_at = now() - make_interval(mins => %s),"
                    " reviewed_at = CASE WHEN %s::text IS NULL THEN NULL"
                    " ELSE now() - make_interval(mins => %s) END,"
                    " outcome = %s, outcome_code = %s, review_state = %s, review_note = %s"
                    " WHERE issue = %s",
                    (
                        minutes,
                        review,
                        minutes,
                        outcome,
                        _CODES[outcome],
                        review,
                        f"note of #{issue}" if review else None,
                        issue,
                    ),
                )
        if not is_open:
            issues.set_state(rt.db, issue, "closed")
        add_issue(rt.db, 100 + issue, boundary=(f"src/c{issue}.py",), body=f"add src/c{issue}.py")


def _decisions(queen: Queen, open_issues, round_orders, now):
    """What a round decides from these orders at `now`: the releases, the plan, the
    notes its orders carry (an open issue's: only an open issue gets an order)."""
    base = queen._base_facts()
    found = facts.round_facts(
        open_issues,
        round_orders,
        base,
        now,
        limits=Limits(max_workers=50, lanes_per_key=50, bee_memory_mb=0, elsewhere=True),
        keys=[0],
        resting={},
        last_key=None,
        host_ready=True,
        free_memory_mb=None,
    )
    released = [(o.issue, state) for o, state in facts.past_floor(round_orders, now)]
    open_numbers = {issue.number for issue in open_issues}
    notes = facts.carried_notes(round_orders)
    return released, plan_round(found), {n: notes[n] for n in notes if n in open_numbers}


def test_a_round_reads_only_the_live_orders_and_decides_as_from_every_order(make_runtime):
    """Issue 28: not every order ever dispatched each round. The ended orders of closed
    issues that hold nothing and rest in no floor are left out, and the releases, the
    plan (holds, back-offs, states) and the notes are those of the whole table."""
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    _history(rt)
    queen = queen_of(rt)
    open_issues = issues.listing(rt.db, open_only=True)
    every = orders.listing(rt.db)
    assert queen._orders(rt.db, open_issues) == every, "the first round reads every order"
    queen._seeded = True
    live = queen._orders(rt.db, open_issues)
    assert sorted({o.issue for o in every} - {o.issue for o in live}) == [13, 17, 18, 22, 23]
    now = facts.utcnow()
    decided = _decisions(queen, open_issues, every, now)
    assert _decisions(queen, open_issues, live, now) == decided
    released, plan, notes = decided
    assert [issue for issue, _ in released] == [15, 16, 19, 20, 25]
    planned = [p.number for p in plan.orders]
    assert 112 not in planned and 111 not in planned and 114 not in planned, "held files"
    assert 113 in planned and 116 in planned and 117 in planned
    assert 24 not in planned, "backing off"
    assert notes == {25: "note of #25"}
    # the round itself releases what passed its floor
    queen.run_once()
    released_rows = {o.issue for o in orders.listing(rt.db) if o.review_state == "released"}
    assert released_rows == {15, 16, 19, 20, 22, 25}


def test_a_quiet_round_takes_one_connection_of_the_pool(make_runtime):
    """Issue 28: the lease, the reads and the releases share one checkout of the pool,
    not one a statement; a round with nothing new to say writes nothing more."""
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1, boundary=("../etc/passwd",))  # reported, never dispatched
    queen = queen_of(rt)
    queen.run_once()
    rt.db.pop_stats()
    assert queen.run_once().idle is None
    assert rt.db.pop_stats().get("requests_num", 0) == 1
