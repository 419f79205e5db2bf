"""One LISTEN connection per process and database, shared by every Listener whatever
channels it names (the board's `hive_board` beside the runners' `hive_orders`); a
subscriber that skips endings hears the queued orders only; a channel nobody wants is
UNLISTENed; a lost connection is told to every subscriber."""

from __future__ import annotations

import pytest

from hive.rules.states import Outcome
from hive.store import endings, orders, pool
from hive.store.board import BOARD_CHANNEL
from hive.store.connect import named
from hive.store.listen import Listener, Reason, is_ending
from hive.swarm import wait_for


def listening(url: str, name: str) -> int:
    """Connections named `name` whose last statement was a LISTEN (or an UNLISTEN)."""
    with pool.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE application_name = %s AND query ILIKE '%%LISTEN %%'",
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
            assert endings.end(conn, endings.OrderEnding(made.fence, Outcome.FINISHED))
            conn.execute("SELECT pg_notify('hive_orders', '4')")
        assert queen.wait(5.0).payloads == ("ended:3",)
        assert claimer.wait(5.0).payloads == ("4",)  # the ending never reached it
        assert queen.wait(5.0).payloads == ("4",)


def shared_query(url: str, name: str) -> str | None:
    """The last statement of the LISTEN connection named `name` (None: there is none)."""
    with pool.connect(url) as conn:
        row = conn.execute(
            "SELECT query FROM pg_stat_activity"
            " WHERE application_name = %s AND query ILIKE '%%LISTEN %%'",
            (name,),
        ).fetchone()
    return None if row is None else str(row[0])


def test_a_board_subscriber_rides_on_the_orders_connection_and_hears_its_channel_only(
    hive_db_url,
):
    url = named(hive_db_url, "test-listen-channels")
    with Listener(url) as runner, pool.connect(hive_db_url) as conn:
        conn.execute("SELECT pg_notify('hive_orders', '6')")
        assert runner.wait(5.0).payloads == ("6",)  # the connection reads in its stride
        with Listener(url, channels=(BOARD_CHANNEL,)) as board:
            # once built, a subscriber hears what is sent next
            conn.execute("SELECT pg_notify('hive_board', 'i:3')")
            conn.execute("SELECT pg_notify('hive_orders', '7')")
            conn.execute("SELECT pg_notify('hive_board', 'i:4')")
            assert listening(hive_db_url, "test-listen-channels") == 1
            # one session's notifications come in order: each heard the other's pass by
            assert runner.wait(5.0).payloads == ("7",)
            assert board.wait(5.0).payloads == ("i:3",)
            assert board.wait(5.0).payloads == ("i:4",)


def test_the_last_board_subscriber_out_unlistens_and_the_orders_keep_coming(hive_db_url):
    url = named(hive_db_url, "test-listen-unlisten")
    with Listener(url) as runner:
        board = Listener(url, channels=(BOARD_CHANNEL,))
        assert shared_query(hive_db_url, "test-listen-unlisten") == "LISTEN hive_board;"
        board.close()
        wait_for(
            lambda: shared_query(hive_db_url, "test-listen-unlisten") == "UNLISTEN hive_board;",
            10,
            "the shared connection UNLISTENs hive_board",
        )
        with pool.connect(hive_db_url) as conn:
            conn.execute("SELECT pg_notify('hive_orders', '8')")
        assert runner.wait(5.0).payloads == ("8",)
        assert listening(hive_db_url, "test-listen-unlisten") == 1


def test_a_lost_connection_is_reported_to_every_subscriber_and_both_channels_come_back(
    hive_db_url,
):
    url = named(hive_db_url, "test-listen-lost")
    with Listener(url) as runner, Listener(url, channels=(BOARD_CHANNEL,)) as board:
        with pool.connect(hive_db_url) as conn:
            killed = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'test-listen-lost'"
            ).fetchall()
        assert killed == [(True,)]
        assert runner.wait(10.0).reason == Reason.RECONNECTED
        assert board.wait(10.0).reason == Reason.RECONNECTED
        with pool.connect(hive_db_url) as conn:
            conn.execute("SELECT pg_notify('hive_board', 'o:5')")
            conn.execute("SELECT pg_notify('hive_orders', '5')")
        assert board.wait(5.0).payloads == ("o:5",)
        assert runner.wait(5.0).payloads == ("5",)
        assert listening(hive_db_url, "test-listen-lost") == 1


def test_a_listener_woken_by_another_thread_hears_woken_and_no_recheck(hive_db_url):
    with Listener(hive_db_url, channels=(BOARD_CHANNEL,)) as board:
        board.wake()
        woken = board.wait(5.0)
        assert (woken.reason, woken.recheck) == (Reason.WOKEN, False)
        assert board.wait(0).reason == Reason.TIMEOUT


def test_an_unknown_channel_is_refused_before_anything_listens(hive_db_url):
    with pytest.raises(ValueError, match="hive_nowhere"):
        Listener(hive_db_url, channels=("hive_nowhere",))


def test_a_hint_wakes_one_hungry_runner_of_the_process_in_turn_not_the_herd(hive_db_url):
    url = named(hive_db_url, "test-listen-one-of")
    full = {"busy": True}
    with (
        Listener(url, is_ending, one_of=True) as first,
        Listener(url, is_ending, one_of=True) as second,
        Listener(url, is_ending, one_of=True, hungry=lambda: not full["busy"]) as busy,
        Listener(url) as board_like,
        pool.connect(hive_db_url) as conn,
    ):
        for payload in ("1", "2", "ended:1", "3", "4"):
            conn.execute("SELECT pg_notify('hive_orders', %s)", (payload,))
        # every hint reaches the one that is not `one_of`
        heard = [board_like.wait(5.0).payloads[0] for _ in range(5)]
        assert heard == ["1", "2", "ended:1", "3", "4"]
        got = {name: [] for name in ("first", "second", "busy")}
        for name, listener in (("first", first), ("second", second), ("busy", busy)):
            while (wake := listener.wait(0.3)).reason == Reason.NOTIFIED:
                got[name] += wake.payloads
        # four orders, two hungry runners: two each, the ending to nobody, none to the busy
        assert sorted(got["first"] + got["second"]) == ["1", "2", "3", "4"]
        assert len(got["first"]) == len(got["second"]) == 2 and got["busy"] == []
        full["busy"] = False
        conn.execute("SELECT pg_notify('hive_orders', '5')")
        conn.execute("SELECT pg_notify('hive_orders', '6')")
        conn.execute("SELECT pg_notify('hive_orders', '7')")
        assert [board_like.wait(5.0).payloads[0] for _ in range(3)] == ["5", "6", "7"]
        woken = [
            name
            for name, one in (("first", first), ("second", second), ("busy", busy))
            if one.wait(0.5).reason == Reason.NOTIFIED
        ]
        assert sorted(woken) == ["busy", "first", "second"]  # in turn, each once
