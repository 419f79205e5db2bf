"""One LISTEN connection per process and database, shared by every Listener; a
subscriber that skips endings hears the queued orders only."""

from __future__ import annotations

from hive.store import orders, pool
from hive.store.connect import named
from hive.store.listen import Listener, is_ending
from hive.swarm import wait_for


def listening(url: str, name: str) -> int:
    with pool.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE application_name = %s AND query ILIKE 'LISTEN%%'",
            (name,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_two_listeners_share_one_connection_and_both_hear_a_notify(hive_db_url):
    url = named(hive_db_url, "test-listen-shared")
    with Listener(url) as one, Listener(url) as two:
        assert listening(hive_db_url, "test-listen-shared") == 1
        with pool.connect(hive_db_url) as conn:
            conn.execute("SELECT pg_notify('hive_orders', '7')")
        assert one.wait(5.0).payloads == ("7",)
        assert two.wait(5.0).payloads == ("7",)
    # the last one out closes the shared connection (the server sees it go soon after)
    wait_for(lambda: listening(hive_db_url, "test-listen-shared") == 0, 10, "the LISTEN ends")


def test_a_claimer_skips_an_ending_and_hears_the_next_queued_order(hive_db_url):
    with pool.connect(hive_db_url) as conn:
        orders.insert(conn, orders.NewOrder(3, "queen-3", "main"), queued=False)
        made = orders.get(conn, 3)
        assert made is not None
    with Listener(hive_db_url, is_ending) as claimer, Listener(hive_db_url) as queen:
        with pool.connect(hive_db_url) as conn:
            assert orders.end(conn, orders.OrderEnding(made.fence, "finished"))
            conn.execute("SELECT pg_notify('hive_orders', '4')")
        assert queen.wait(5.0).payloads == ("ended:3",)
        assert claimer.wait(5.0).payloads == ("4",)  # the ending never reached it
        assert queen.wait(5.0).payloads == ("4",)
