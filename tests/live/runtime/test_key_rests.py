"""Keys rest in the store (RULES 7, lesson module 6): an ending that lands after a newer
one still rests its key, and a fresh Queen on the same database skips a resting key
until its rest ends."""

from __future__ import annotations

import psycopg

from hive import configs
from hive.actors.queen.queen import Queen
from hive.rules.keys import key_slots
from hive.rules.states import Outcome
from hive.runtime import queen_ports
from hive.store import endings, orders
from hive.store.orders import Fence
from tests.live.runtime.conftest import add_issue

KEY_2 = {"WORKER_KEY_2": "second-key-0123456789"}


def queen_of(rt) -> Queen:
    return Queen(queen_ports(rt), configs.queen_config(rt.settings), free_memory=lambda: None)


def end_as(rt, issue: int, outcome: Outcome, **fields) -> None:
    order = orders.get(rt.db, issue)
    assert order is not None
    fence = Fence(issue, order.conversation_id, None)
    assert endings.end(rt.db, endings.OrderEnding(fence, outcome, **fields))


def test_an_older_ending_that_lands_after_a_newer_one_still_rests_its_key(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", **KEY_2)
    add_issue(rt.db, 1, boundary=("src/app.py",))
    add_issue(rt.db, 2, boundary=("src/util.py",))
    queen = queen_of(rt)
    assert queen.run_once().dispatched == (1, 2)
    refused_key = orders.get(rt.db, 1).key_index  # type: ignore[union-attr]
    end_as(rt, 2, Outcome.FINISHED)
    queen.run_once()  # sees #2's ending (and #2 goes on; its work waits for review)
    # #1's refusal lands now, but its transaction began before #2's ended: its
    # finished_at is the older of the two
    end_as(rt, 1, Outcome.REFUSED)
    with psycopg.connect(rt.url, autocommit=True) as conn:
        conn.execute(
            "UPDATE hive.queen_dispatch SET finished_at = "
            "(SELECT finished_at FROM hive.queen_dispatch WHERE issue = 2) - interval '1 second'"
            " WHERE issue = 1"
        )
    queen.run_once()
    again = orders.get(rt.db, 1)
    assert again is not None and again.finished_at is None  # #1 went again...
    assert again.key_index != refused_key  # ...on the key that was not refused


def test_a_fresh_queen_does_not_dispatch_on_a_key_resting_from_before_her_start(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1)
    assert queen_of(rt).run_once().dispatched == (1,)
    end_as(rt, 1, Outcome.QUOTA_EXHAUSTED)
    fresh = queen_of(rt)  # a restarted Queen, or the standby taking over: no memory
    stopped = fresh.run_once()
    assert stopped.dispatched == ()
    assert stopped.refusals[0].startswith(
        "every free key rests after its provider refused a turn: key 0 for "
    )
    # the rest ends (as if its hour passed): the next round dispatches on the key again
    with psycopg.connect(rt.url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_key_rest SET rests_until = now() - interval '1 second'")
    assert queen_of(rt).run_once().dispatched == (1,)
    assert orders.get(rt.db, 1).key_index == key_slots(rt.settings.worker_keys)[0].index  # type: ignore[union-attr]


def test_a_quota_refusal_with_a_reset_time_rests_the_key_until_then(make_runtime):
    from datetime import UTC, datetime, timedelta

    from hive.store import keyrests
    from hive.testing import wait_for_ending
    from tests.live.runtime.conftest import queue
    from tests.live.runtime.test_runner import claimer_of

    reset = (datetime.now(UTC) + timedelta(hours=5)).replace(microsecond=0)
    line = f"HIVE-REFUSAL: quota resets={reset.isoformat()}"
    rt = make_runtime(AGENT=f"command:echo '{line}'")
    queue(rt, 1)
    assert claimer_of(rt).run_once().started == (1,)
    assert wait_for_ending(rt.db, 1).outcome == "quota exhausted"
    (rest,) = keyrests.resting(rt.db)
    assert (rest.key_index, rest.until, rest.reason) == (0, reset, "quota exhausted")


def test_a_rest_of_another_key_at_the_same_index_rests_nothing(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 1)
    first = queen_of(rt)
    assert first.run_once().dispatched == (1,)
    end_as(rt, 1, Outcome.QUOTA_EXHAUSTED)
    first.close()  # her replica restarts
    # the operator replaced HIVE_WORKER_KEY with another account's key
    replaced = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", WORKER_KEY="another-account-key-987")
    result = queen_of(replaced).run_once()
    assert result.dispatched == (1,), result


def test_a_python_agents_report_may_carry_the_reset_time(make_runtime):
    from datetime import UTC, datetime, timedelta

    from hive.store import keyrests
    from hive.testing import wait_for_ending
    from tests.live.runtime.conftest import AGENT, queue
    from tests.live.runtime.test_runner import claimer_of

    rt = make_runtime(AGENT=AGENT + "refuses_quota_until_reset")
    queue(rt, 1)
    assert claimer_of(rt).run_once().started == (1,)
    assert wait_for_ending(rt.db, 1).outcome == "quota exhausted"
    (rest,) = keyrests.resting(rt.db)
    assert timedelta(hours=1, minutes=59) < rest.until - datetime.now(UTC) <= timedelta(hours=2)
