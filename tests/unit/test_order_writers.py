"""No statement writes an order without the state table (RULES 4): every query that
updates or inserts into `hive.queen_dispatch` carries a `hive.order_state` guard, or is
named here with why it moves no order's state."""

import re

from hive.store.sql import QUERIES

_WRITES = re.compile(r"\b(UPDATE|INSERT\s+INTO)\s+hive\.queen_dispatch\b(?!_)", re.IGNORECASE)
# a guard: the row's state read by hive.order_state and held to the states its event may
# leave (`from_states`, `replaceable`) or to one state by its number
_STATE = re.compile(r"hive\.order_state\s*\(", re.IGNORECASE)
_HELD_TO = re.compile(
    r"%\((from_states|replaceable)\)s|order_state\s*\([^)]*\)\s*=\s*\d", re.IGNORECASE
)


def guarded(text: str) -> bool:
    return bool(_STATE.search(text) and _HELD_TO.search(text))


# the writers that leave a row in the state it is in, each with why
MOVE_NO_STATE = {
    "heartbeat_order": "renews claimed_at of a running claim",
    "mark_order_started": "resets dispatched_at, the running turn's clock",
    "record_salvage": "records the salvage commit of an attempt already ended",
    "claim_order": "a runner takes a running order: claimed_by and its clocks",
    "claim_orders": "claim_order for a batch: a runner takes running orders, each as one",
    "refuse_order": "a runner gives a running order back, its name in refused_by",
    "release_order": "a runner gives back a running order it could not start",
    "bench_fill_orders": "fills a scratch database for the benchmarks",
}


def writers() -> dict[str, str]:
    return {name: query.text for name, query in QUERIES.items() if _WRITES.search(query.text)}


def test_every_writer_of_an_order_is_held_to_the_state_table_or_moves_no_state():
    unguarded = sorted(
        name for name, text in writers().items() if name not in MOVE_NO_STATE and not guarded(text)
    )
    assert unguarded == [], f"writers of queen_dispatch with no hive.order_state guard: {unguarded}"


def test_the_list_of_writers_that_move_no_state_names_real_writers_without_a_guard():
    found = writers()
    assert set(MOVE_NO_STATE) <= set(found)
    assert [n for n in MOVE_NO_STATE if guarded(found[n])] == []


def test_the_writers_found_include_the_ones_that_move_an_order():
    assert {
        "insert_order",
        "end_order",
        "reap_orders",
        "write_verdict",
        "ci_red",
        "release_at_floor",
    } <= set(writers())
