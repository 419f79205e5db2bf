import re
import uuid

from hive.rules.states import Outcome
from hive.store import bundles, endings, leases, orders, reaping
from hive.store.bundles import NewBundle
from hive.store.endings import OrderEnding
from hive.store.listen import Listener, Reason
from hive.store.orders import ClaimedOrder, Fence, Insertion, NewOrder, Order
from hive.store.sql import q

from .conftest import backdate, local, queue

BUNDLE = NewBundle("queen-1", "main", "a" * 40, "b" * 40, b"PACK")


def test_a_queued_order_carries_its_brief_and_wakes_the_listeners(conn, hive_db_url):
    with Listener(hive_db_url) as listener:
        made = queue(conn, 1, brief="fix it", key_index=2, key_fingerprint="f" * 16)
        woke = listener.wait(5.0)
    assert woke.reason == Reason.NOTIFIED and woke.payloads == ("1",)
    assert made.queued_at is not None and made.brief == "fix it"
    assert (made.started, made.attempt, made.dispatched_at) == (True, 1, None)


def test_a_local_order_is_never_claimed_by_a_runner(conn):
    made = local(conn, 1)
    assert made.queued_at is None and made.dispatched_at is not None
    assert orders.claim(conn, "r1") is None


def test_an_order_in_flight_is_not_replaced(conn):
    first = queue(conn, 1)
    again = orders.insert(conn, NewOrder(1, "queen-1", "main"), queued=True)
    assert again is Insertion.IN_FLIGHT
    assert orders.get(conn, 1) == first


def queen_lease(conn, holder: str = "queen-a") -> leases.Lease:
    lease = leases.claim(conn, leases.QUEEN_LEASE, holder, 180)
    assert lease is not None
    return lease


def expire(conn) -> None:
    """The Queen lease runs out (the test's clock: its expiry moved into the past)."""
    conn.execute(
        "UPDATE hive.queen_lease SET expires_at = now() - interval '1 second' WHERE name = %s",
        (leases.QUEEN_LEASE,),
    )


def test_an_order_written_under_the_held_queen_lease_lands(conn):
    lease = queen_lease(conn)
    new = NewOrder(1, "queen-1", "main")
    assert orders.insert(conn, new, queued=True, lease=lease) is Insertion.WRITTEN
    made = orders.get(conn, 1)
    assert made is not None and made.conversation_id == new.conversation_id
    assert leases.held(conn, lease)


def test_an_order_under_a_stale_fence_writes_nothing(conn):
    old = queen_lease(conn, "queen-a")
    expire(conn)
    new = queen_lease(conn, "queen-b")  # took it over after it ran out: the fence went up
    assert new.fence == old.fence + 1
    stale = orders.insert(conn, NewOrder(1, "queen-1", "main"), queued=True, lease=old)
    assert stale is Insertion.LEASE_GONE
    assert orders.listing(conn) == [] and not leases.held(conn, old)
    held = orders.insert(conn, NewOrder(1, "queen-1", "main"), queued=True, lease=new)
    assert held is Insertion.WRITTEN


def test_an_order_under_an_expired_queen_lease_writes_nothing(conn):
    lease = queen_lease(conn)
    expire(conn)
    expired = orders.insert(conn, NewOrder(1, "queen-1", "main"), queued=False, lease=lease)
    assert expired is Insertion.LEASE_GONE
    assert orders.listing(conn) == [] and not leases.held(conn, lease)


def test_an_order_under_a_released_queen_lease_writes_nothing_nor_replaces_one(conn):
    lease = queen_lease(conn)
    first = NewOrder(1, "queen-1", "main")
    assert orders.insert(conn, first, queued=True, lease=lease) is Insertion.WRITTEN
    assert endings.end(
        conn, OrderEnding(Fence(1, first.conversation_id, None), Outcome.ENDED_BADLY)
    )
    assert leases.release(conn, lease)
    for issue in (1, 2):  # a finished row is not replaced, a new one not written
        new = NewOrder(issue, f"queen-{issue}", "main")
        assert orders.insert(conn, new, queued=True, lease=lease) is Insertion.LEASE_GONE
    assert [(o.issue, o.outcome) for o in orders.listing(conn)] == [(1, "ended badly")]
    assert orders.history(conn, 1) == []


def test_a_new_attempt_archives_the_ended_row_and_gets_a_new_conversation(conn):
    first = queue(conn, 1, brief="first")
    claimed = orders.claim(conn, "r1")
    assert claimed is not None
    endings.end(conn, OrderEnding(claimed.fence, Outcome.ENDED_BADLY))
    second = queue(conn, 1, brief="second")
    assert second.attempt == 2 and second.conversation_id != first.conversation_id
    assert (second.claimed_by, second.finished_at, second.outcome) == (None, None, None)
    [archived] = orders.history(conn, 1)
    assert archived.snapshot["brief"] == "first"
    assert archived.snapshot["outcome"] == "ended badly"
    assert archived.snapshot["conversation_id"] == str(first.conversation_id)


def test_an_insert_under_a_lease_gone_says_so_even_when_the_order_is_in_flight(conn):
    lease = queen_lease(conn)
    first = queue(conn, 1)
    assert orders.insert(conn, NewOrder(1, "queen-1", "main"), queued=True, lease=lease) is (
        Insertion.IN_FLIGHT
    )
    assert leases.release(conn, lease)
    again = orders.insert(conn, NewOrder(1, "queen-1", "main"), queued=True, lease=lease)
    assert again is Insertion.LEASE_GONE
    assert orders.get(conn, 1) == first


def test_a_claimed_order_carries_each_column_of_its_row_under_its_own_name(conn):
    queue(conn, 1, brief="do it", key_index=2, key_fingerprint="f" * 16, base_sha="a" * 40)
    claimed = orders.claim(conn, "r1")
    row = orders.get(conn, 1)
    assert claimed is not None and row is not None
    for name in ClaimedOrder.__dataclass_fields__:
        column = "claimed_by" if name == "runner" else name
        assert getattr(claimed, name) == getattr(row, column), name


def test_the_oldest_queued_order_is_claimed_first(conn):
    for issue in (3, 1, 2):
        queue(conn, issue)
    got = [orders.claim(conn, "r1") for _ in range(4)]
    assert [c.issue if c else None for c in got] == [3, 1, 2, None]
    assert got[0] is not None and got[0].runner == "r1"
    assert orders.get(conn, 3).claimed_by == "r1"


def test_a_batch_claims_the_oldest_claimable_orders_in_one_statement_as_one_claims_them(conn):
    for issue in (5, 3, 1, 4, 2):
        queue(conn, issue)
    queue(conn, 6, key_index=1)
    assert orders.claim(conn, "r1").issue == 5  # claimed already: not in a batch
    conn.execute("UPDATE hive.queen_dispatch SET started = false WHERE issue = 4")
    conn.execute("UPDATE hive.queen_dispatch SET refused_by = '{r2}' WHERE issue = 1")
    assert orders.claim_many(conn, "r2", 0) == []
    got = orders.claim_many(conn, "r2", 2)
    assert [c.issue for c in got] == [3, 2]  # oldest first; 1 refused by r2, 4 not started
    for claimed in got:
        row = orders.get(conn, claimed.issue)
        assert claimed.runner == row.claimed_by == "r2"
        assert claimed.fence == Fence(row.issue, row.conversation_id, "r2")
        for name in ClaimedOrder.__dataclass_fields__:
            column = "claimed_by" if name == "runner" else name
            if column in Order.__dataclass_fields__:
                assert getattr(claimed, name) == getattr(row, column), name
    assert [c.issue for c in orders.claim_many(conn, "r2", 10)] == [6]
    assert [c.issue for c in orders.claim_many(conn, "r3", 10)] == [1]
    assert orders.claim_many(conn, "r3", 10) == []


def test_claimed_finished_and_unstarted_orders_are_not_claimable(conn):
    queue(conn, 1)
    assert orders.claim(conn, "r1") is not None
    claimed_2 = (queue(conn, 2), orders.claim(conn, "r1"))[1]
    endings.end(conn, OrderEnding(claimed_2.fence, Outcome.FINISHED))
    queue(conn, 3)
    conn.execute("UPDATE hive.queen_dispatch SET started = false WHERE issue = 3")
    assert orders.claim(conn, "r2") is None


def test_a_refused_order_goes_to_another_runner_and_never_back(conn, hive_db_url):
    queue(conn, 1, key_index=1)
    mine = orders.claim(conn, "r1")
    assert mine is not None
    with Listener(hive_db_url) as listener:
        assert orders.refuse(conn, mine.fence)
        assert listener.wait(5.0).payloads == ("1",)
    row = orders.get(conn, 1)
    assert (row.claimed_by, row.claimed_at, row.refused_by) == (None, None, ["r1"])
    assert orders.claim(conn, "r1") is None
    theirs = orders.claim(conn, "r2")
    assert theirs is not None and theirs.issue == 1


def test_a_refusal_by_a_runner_that_holds_no_claim_changes_nothing(conn):
    queue(conn, 1)
    mine = orders.claim(conn, "r1")
    assert not orders.refuse(conn, Fence(1, mine.conversation_id, "r2"))
    assert orders.get(conn, 1).claimed_by == "r1"


def test_a_heartbeat_renews_only_its_own_claim_of_this_attempt(conn):
    queue(conn, 1)
    mine = orders.claim(conn, "r1")
    backdate(conn, 1, "claimed_at", 5)
    before = orders.get(conn, 1)
    assert not orders.heartbeat(conn, Fence(1, mine.conversation_id, "r2"))
    assert not orders.heartbeat(conn, Fence(1, uuid.uuid4(), "r1"))
    assert not orders.heartbeat(conn, Fence(2, mine.conversation_id, "r1"))
    assert orders.get(conn, 1) == before
    assert orders.heartbeat(conn, mine.fence)
    assert orders.get(conn, 1).claimed_at > before.claimed_at


def test_a_heartbeat_after_the_ending_says_the_order_is_gone(conn):
    queue(conn, 1)
    mine = orders.claim(conn, "r1")
    assert endings.end(conn, OrderEnding(mine.fence, Outcome.FINISHED))
    assert not orders.heartbeat(conn, mine.fence)


def test_an_ending_from_another_runner_or_an_older_conversation_changes_nothing(conn):
    queue(conn, 1)
    old = orders.claim(conn, "r1")
    endings.end(conn, OrderEnding(old.fence, Outcome.ENDED_BADLY))
    queue(conn, 1)
    mine = orders.claim(conn, "r1")
    before = orders.get(conn, 1)
    assert not endings.end(conn, OrderEnding(old.fence, Outcome.FINISHED, bundle=BUNDLE))
    assert not endings.end(
        conn, OrderEnding(Fence(1, mine.conversation_id, "r2"), Outcome.FINISHED, bundle=BUNDLE)
    )
    assert not endings.end(
        conn, OrderEnding(Fence(1, mine.conversation_id, None), Outcome.FINISHED)
    )
    assert orders.get(conn, 1) == before
    assert bundles.get(conn, 1) is None


def test_the_ending_stores_its_bundle_in_the_same_statement(conn):
    queue(conn, 1)
    mine = orders.claim(conn, "r1")
    assert endings.end(
        conn, OrderEnding(mine.fence, Outcome.FINISHED, bundle=BUNDLE, input_tokens=10)
    )
    row, stored = orders.get(conn, 1), bundles.get(conn, 1)
    assert (row.outcome, row.input_tokens) == ("finished", 10) and row.finished_at is not None
    assert stored is not None and (stored.data, stored.size, stored.runner) == (b"PACK", 4, "r1")
    assert stored.head_sha == "b" * 40
    assert [b.issue for b in bundles.listing(conn)] == [1]


def test_every_field_of_an_ending_lands_in_its_column(conn):
    queue(conn, 1)
    mine = orders.claim(conn, "r1")
    ending = OrderEnding(
        mine.fence,
        Outcome.HANDED_BACK,
        "stopped by the drain",
        input_tokens=10,
        output_tokens=20,
        provider="anthropic",
        model="claude-reported",
        salvaged_sha="c" * 40,
        salvaged_files=("src/app.py",),
        bundle=BUNDLE,
    )
    assert endings.end(conn, ending)
    row, stored = orders.get(conn, 1), bundles.get(conn, 1)
    assert (row.outcome, row.detail) == ("handed back", "stopped by the drain")
    assert (row.input_tokens, row.output_tokens) == (10, 20)
    assert (row.provider, row.model) == ("anthropic", "claude-reported")
    assert (row.salvaged_sha, row.salvaged_files) == ("c" * 40, ["src/app.py"])
    assert stored is not None
    assert (stored.branch, stored.base, stored.base_sha, stored.head_sha, stored.data) == (
        BUNDLE.branch,
        BUNDLE.base,
        BUNDLE.base_sha,
        BUNDLE.head_sha,
        BUNDLE.data,
    )


def test_the_endings_parameters_are_exactly_the_ones_end_order_names():
    named = set(re.findall(r"%\((\w+)\)s", q("end_order")))
    fence = Fence(1, uuid.uuid4(), "r1")
    assert set(endings.end_params(OrderEnding(fence, Outcome.FINISHED))) == named
    assert set(endings.end_params(OrderEnding(fence, Outcome.FINISHED, bundle=BUNDLE))) == named


def test_an_ending_with_nothing_beyond_base_stores_no_bundle_and_drops_a_stale_one(conn):
    queue(conn, 1)
    endings.end(
        conn, OrderEnding(orders.claim(conn, "r1").fence, Outcome.HANDED_BACK, bundle=BUNDLE)
    )
    queue(conn, 1)  # the next attempt continues the handed-back branch
    assert endings.end(conn, OrderEnding(orders.claim(conn, "r1").fence, Outcome.FINISHED))
    assert bundles.get(conn, 1) is None


def test_the_queen_ends_her_own_order_with_no_runner(conn):
    made = local(conn, 1)
    assert endings.end(conn, OrderEnding(made.fence, Outcome.FINISHED))
    assert orders.get(conn, 1).outcome == "finished"


def test_an_ending_records_its_salvage_commit_and_one_without_leaves_none(conn):
    salvaging, plain = local(conn, 1), local(conn, 2)
    sha = "a" * 40
    assert endings.end(
        conn,
        OrderEnding(
            salvaging.fence, Outcome.HANDED_BACK, salvaged_sha=sha, salvaged_files=("x.py", "y.py")
        ),
    )
    assert endings.end(conn, OrderEnding(plain.fence, Outcome.FINISHED))
    kept, none = orders.get(conn, 1), orders.get(conn, 2)
    assert (kept.salvaged_sha, kept.salvaged_files) == (sha, ["x.py", "y.py"])
    assert kept.salvaged_at is not None
    assert (none.salvaged_sha, none.salvaged_files, none.salvaged_at) == (None, None, None)


def test_a_reapers_salvage_is_recorded_only_on_the_attempt_it_reaped(conn):
    reaped = local(conn, 1)
    reaping.reap_at_boot(conn)
    assert orders.record_salvage(conn, 1, reaped.conversation_id, "b" * 40, ["x.py"])
    assert orders.get(conn, 1).salvaged_sha == "b" * 40
    assert not orders.record_salvage(conn, 1, uuid.uuid4(), "c" * 40, ["x.py"])
    assert orders.get(conn, 1).salvaged_files == ["x.py"]


def test_marking_the_turn_started_resets_its_clock_only_for_the_claimant(conn):
    queue(conn, 1)
    mine = orders.claim(conn, "r1")
    backdate(conn, 1, "dispatched_at", 30)
    before = orders.get(conn, 1)
    assert not orders.mark_started(conn, Fence(1, mine.conversation_id, "r2"))
    assert orders.get(conn, 1) == before
    assert orders.mark_started(conn, mine.fence)
    assert orders.get(conn, 1).dispatched_at > before.dispatched_at


def test_the_boot_reaper_ends_only_the_queens_own_unfinished_orders(conn):
    local(conn, 1)
    local(conn, 2)
    local(conn, 3)
    endings.end(conn, OrderEnding(orders.get(conn, 3).fence, Outcome.FINISHED))
    queue(conn, 4)
    queue(conn, 5)
    orders.claim(conn, "r1")
    reaped = reaping.reap_at_boot(conn, spare=[2]).ended
    assert [o.issue for o in reaped] == [1]
    assert reaped[0].outcome == "reaped at boot" and reaped[0].finished_at is not None
    assert [o.issue for o in orders.listing(conn, unfinished_only=True)] == [2, 4, 5]
    assert orders.get(conn, 3).outcome == "finished"


def test_the_stall_reaper_releases_orders_of_silent_runners_only(conn):
    for issue in (1, 2, 3, 4):
        queue(conn, issue)
    for _ in (1, 2, 3):
        orders.claim(conn, "r1")
    backdate(conn, 1, "claimed_at", 11)  # silent
    backdate(conn, 2, "claimed_at", 9)  # still within its ten minutes
    backdate(conn, 3, "claimed_at", 30)  # silent, but this process runs its bee
    conn.execute("UPDATE hive.queen_dispatch SET queued_at = queued_at - interval '1 hour'")
    local(conn, 5)
    # an unclaimed queued row and a local row with an old clock are not runner rows
    conn.execute(
        "UPDATE hive.queen_dispatch SET claimed_at = now() - interval '1 hour'"
        " WHERE claimed_by IS NULL"
    )
    reaped = reaping.reap_silent_runners(conn, 10, spare=[3]).ended
    assert [(o.issue, o.outcome) for o in reaped] == [(1, "reaped: runner silent")]
    assert [o.issue for o in orders.listing(conn, unfinished_only=True)] == [2, 3, 4, 5]


def test_the_two_hour_rule_measures_the_turn_and_never_reaps_a_queued_order(conn):
    queue(conn, 1)
    queue(conn, 2)
    queue(conn, 3)
    local(conn, 4)
    for _ in (1, 2):
        orders.claim(conn, "r1")
    conn.execute(
        "UPDATE hive.queen_dispatch SET queued_at = queued_at - interval '5 hours',"
        " claimed_at = now(), dispatched_at = now() - interval '3 hours' WHERE issue <> 2"
    )
    reaped = reaping.reap_stalled_turns(conn, 120, spare=[4]).ended
    assert [(o.issue, o.outcome) for o in reaped] == [
        (1, "reaped: no completion within 120 minutes")
    ]
    assert reaping.reap_stalled_turns(conn, 120).ended == [orders.get(conn, 4)]
    assert orders.get(conn, 3).finished_at is None


def test_a_queued_order_the_queen_cancelled_is_not_claimed(conn):
    made = queue(conn, 1)
    assert endings.end(conn, OrderEnding(Fence(1, made.conversation_id, None), Outcome.CANCELLED))
    assert orders.claim(conn, "r1") is None


def test_an_order_ends_once(conn):
    queue(conn, 1)
    mine = orders.claim(conn, "r1")
    assert endings.end(conn, OrderEnding(mine.fence, Outcome.FINISHED))
    ended = orders.get(conn, 1)
    assert not endings.end(conn, OrderEnding(mine.fence, Outcome.ENDED_BADLY))
    assert orders.get(conn, 1) == ended


def test_the_two_hour_rule_leaves_an_unstarted_row_alone(conn):
    local(conn, 1)
    conn.execute(
        "UPDATE hive.queen_dispatch SET started = false, dispatched_at = now() - interval '3 hours'"
    )
    assert reaping.reap_stalled_turns(conn, 120).ended == []
