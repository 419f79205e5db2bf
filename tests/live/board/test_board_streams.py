"""Event streams on the server's loop: they hold no worker, they are capped with a clear
503, and a stop closes them at once; the board's LISTEN rides on the process's shared
connection, made again when lost, UNLISTENed when no stream is open."""

from __future__ import annotations

import threading

from hive.board import hub
from hive.http import ExportServer, HttpConfig, store_surface
from hive.metrics import HiveMetrics
from hive.store import issues, pool
from hive.store.connect import named
from hive.store.issues import NewIssue
from hive.store.listen import Listener
from hive.swarm import wait_for
from tests.live.surface.conftest import settings_for
from tests.unit.surface.helpers import call

from .sse import Stream


def server_on(world, **config) -> ExportServer:
    surface = store_surface(
        settings_for(world), world.db, world.db_url, HiveMetrics().registry, lambda: False
    )
    server = ExportServer(HttpConfig(port=0, **config), surface)
    server.start()
    return server


def opened(server: ExportServer, target: str = "/board/events") -> Stream:
    stream = Stream(server.port, target)
    assert stream.status == 200
    return stream


def test_open_streams_hold_no_worker(world):
    server = server_on(world, workers=1)
    streams = []
    try:
        streams = [opened(server) for _ in range(4)]
        for stream in streams:
            assert stream.next().name == "snapshot"
        # one worker, four streams open: the routes still answer
        assert call(server, "GET", "/healthz").status == 200
        assert call(server, "GET", "/api/orders").status == 200
    finally:
        for stream in streams:
            stream.close()
        server.stop()


def test_one_stream_over_the_cap_is_a_clear_503_and_a_freed_place_is_taken(world):
    server = server_on(world, streams_max=2)
    first, second = opened(server), opened(server)
    try:
        first.next()
        second.next()
        third = Stream(server.port, "/board/events?issue=1")
        assert third.status == 503
        assert third.headers["retry-after"] == "10"
        assert b"too many open event streams (at most 2)" in third.buf
        assert third.ended()
        first.close()
        fourth = None
        for _ in range(100):  # the loop sees the close at its next turn
            attempt = Stream(server.port, "/board/events")
            if attempt.status == 200:
                fourth = attempt
                break
            attempt.close()
        assert fourth is not None and fourth.next().name == "snapshot"
        fourth.close()
    finally:
        second.close()
        server.stop()


def test_a_stop_with_streams_open_closes_them_and_returns(world):
    server = server_on(world)
    streams = [opened(server) for _ in range(3)] + [opened(server, "/board/events?issue=1")]
    for stream in streams[:3]:
        stream.next()
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    try:
        assert all(stream.ended() for stream in streams)
        stopper.join(10)
        assert not stopper.is_alive()
    finally:
        for stream in streams:
            stream.close()


def test_a_lost_listening_connection_is_made_again_and_each_board_gets_a_snapshot(world):
    server = server_on(world)
    stream = opened(server)
    try:
        stream.next()  # the first snapshot
        killed = world.db.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE query LIKE 'LISTEN hive_board%'"
        ).fetchall()
        assert killed == [(True,)]
        # notifications sent while it was away are lost: the stream starts afresh
        assert stream.next().name == "snapshot"
        issues.upsert(world.db, 3, NewIssue(title="after the reconnect"))
        # as a card, or in the snapshot of a reconnect that happened after the change
        stream.until(lambda e: "after the reconnect" in e.data)
    finally:
        stream.close()
        server.stop()


def test_with_no_stream_open_the_board_unlistens_on_the_shared_connection_and_listens_again(
    world, monkeypatch
):
    monkeypatch.setattr(hub, "IDLE_STOP_SECONDS", 0.5)
    monkeypatch.setattr(hub, "PING_SECONDS", 0.2)  # the hub looks at its streams this often
    url = named(world.db_url, "test-board-idle")

    def last_statement() -> str | None:
        row = world.db.execute(
            "SELECT query FROM pg_stat_activity"
            " WHERE application_name = 'test-board-idle' AND query ILIKE '%LISTEN %'"
        ).fetchone()
        return None if row is None else str(row[0])

    def watches() -> int:
        row = world.db.execute("SELECT count(*) FROM hive.queen_board_watch").fetchone()
        return int(row[0]) if row else 0

    surface = store_surface(
        settings_for(world), world.db, url, HiveMetrics().registry, lambda: False
    )
    server = ExportServer(HttpConfig(port=0), surface)
    server.start()
    try:
        with Listener(url) as runner:  # the process's claimer, say
            stream = opened(server)
            assert stream.next().name == "snapshot"
            assert last_statement() == "LISTEN hive_board;"
            assert watches() == 1
            stream.close()
            wait_for(
                lambda: last_statement() == "UNLISTEN hive_board;",
                10,
                "the shared connection UNLISTENs hive_board",
            )
            assert watches() == 0
            with pool.connect(world.db_url) as conn:
                conn.execute("SELECT pg_notify('hive_orders', '9')")
            assert runner.wait(5.0).payloads == ("9",)

            again = opened(server)  # the next page listens again
            try:
                assert again.next().name == "snapshot"
                assert last_statement() == "LISTEN hive_board;"
                issues.upsert(world.db, 4, NewIssue(title="listened again"))
                again.until(lambda e: e.name == "card" and "listened again" in e.data)
                server.stop()  # with the stream open: the board stops listening too
                assert again.ended()
            finally:
                again.close()
            wait_for(
                lambda: last_statement() == "UNLISTEN hive_board;",
                10,
                "the stopped board's UNLISTEN",
            )
            assert watches() == 0
    finally:
        server.stop()
