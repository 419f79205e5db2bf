"""`hive serve` waits for its store at start (rules.startup): a database that comes up
during the wait is used; one that does not is one line after the wait."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import pytest

from hive.errors import StoreUnreachable
from hive.store import connect

pytestmark = pytest.mark.live


def _upstream(url: str) -> Callable[[], socket.socket]:
    """How to reach the server `url` names: its Unix socket or its TCP port."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    host, port = str(info.get("host") or "127.0.0.1"), int(info.get("port") or 5432)
    if host.startswith("/"):

        def unix() -> socket.socket:
            s = socket.socket(socket.AF_UNIX)
            s.connect(f"{host}/.s.PGSQL.{port}")
            return s

        return unix
    return lambda: socket.create_connection((host, port))


def _pipe(a: socket.socket, b: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := a.recv(65536):
            b.sendall(data)
    for s in (a, b):
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)


@contextmanager
def late_port(url: str) -> Iterator[tuple[int, threading.Event]]:
    """A TCP port on 127.0.0.1 where nothing listens until the event is set; from then
    on each connection to it is forwarded to the server `url` names."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    up, stop = threading.Event(), threading.Event()
    connect_upstream = _upstream(url)

    def serve() -> None:
        if not up.wait(60) or stop.is_set():
            return
        with socket.create_server(("127.0.0.1", port)) as server:
            server.settimeout(0.2)
            while not stop.is_set():
                try:
                    client, _ = server.accept()
                except TimeoutError:
                    continue
                upstream = connect_upstream()
                for a, b in ((client, upstream), (upstream, client)):
                    threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port, up
    finally:
        stop.set()
        up.set()
        thread.join(5)


def test_a_store_that_comes_up_during_the_wait_is_used(hive_db_url: str, caplog) -> None:
    with late_port(hive_db_url) as (port, up):
        late_url = psycopg.conninfo.make_conninfo(hive_db_url, host="127.0.0.1", port=port)
        pauses: list[float] = []

        def pause(seconds: float) -> None:  # the store comes up during the second pause
            pauses.append(seconds)
            if len(pauses) == 2:
                up.set()

        with caplog.at_level(logging.INFO, logger="hive.store"):
            connect.wait_reachable(late_url, 60, sleep=pause)
        with psycopg.connect(late_url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    assert pauses[:2] == [0.5, 1.0]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) >= 2 and all(f"127.0.0.1:{port} is unreachable" in w for w in warned)
    assert "trying again in 0.5 s" in warned[0]
    assert any("answers after" in r.getMessage() for r in caplog.records)


def test_a_store_that_stays_away_is_one_line_once_the_wait_is_over() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://hive:hunter2@127.0.0.1:{port}/hive"
    now = [0.0]

    def pause(seconds: float) -> None:  # the test's clock: each pause moves it on
        now[0] += seconds

    with pytest.raises(StoreUnreachable) as raised:
        connect.wait_reachable(url, 3, sleep=pause, clock=lambda: now[0])
    assert now[0] == 3.0  # 0.5 + 1 + 1.5 (the rest of the wait), then the last attempt
    line = str(raised.value)
    assert f"127.0.0.1:{port}" in line and "hunter2" not in line and "\n" not in line
