"""A LISTEN connection of its own for `hive_orders` (DESIGN 5.2: runners wake on
LISTEN/NOTIFY and also poll every `HIVE_RUNNER_SECONDS`; a NOTIFY is only a hint).

`wait(timeout_seconds)` returns when a notification arrives, when the connection was
lost and made again (notifications sent meanwhile are lost, so the owner must re-check
the table), or when the timeout passes: the caller's poll and its wake-up are one loop.

    with Listener(url) as listener:
        while running:
            claim_what_there_is()
            listener.wait(settings.runner_seconds)
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

import psycopg

from hive.store.db import Db, one
from hive.store.sql import q

log = logging.getLogger("hive.store.listen")

ORDERS_CHANNEL = "hive_orders"
# between two failed reconnects while the server is away
RECONNECT_PAUSE_SECONDS = 0.2
CONNECT_TIMEOUT_SECONDS = 2

Reason = Literal["notified", "reconnected", "timeout"]


@dataclass(frozen=True)
class Wake:
    reason: Reason
    payloads: tuple[str, ...] = ()

    @property
    def recheck(self) -> bool:
        """Whether the owner should look at the table now (a hint or a lost hint)."""
        return self.reason != "timeout"


class Listener:
    def __init__(self, url: str) -> None:
        self.url = url
        self.reconnects = 0
        self._conn: psycopg.Connection[Any] | None = None
        self._connect()

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening; safe to call twice."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def wait(self, timeout_seconds: float) -> Wake:
        """Block up to `timeout_seconds` for a notification (see the module)."""
        deadline = time.monotonic() + timeout_seconds
        if self._conn is None and self._reconnect(deadline):
            return Wake("reconnected")
        while self._conn is not None:
            remaining = deadline - time.monotonic()
            try:
                got = [
                    n.payload
                    for n in self._conn.notifies(timeout=max(0.0, remaining), stop_after=1)
                ]
                if got or remaining <= 0:
                    return Wake("notified", tuple(got)) if got else Wake("timeout")
            except psycopg.OperationalError as err:
                log.warning("listen: lost the connection (%s); reconnecting", err)
                self._conn.close()
                self._conn = None
                if self._reconnect(deadline):
                    return Wake("reconnected")
        return Wake("timeout")

    def _connect(self) -> None:
        conn = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        conn.execute(q("listen_orders"))
        self._conn = conn

    def _reconnect(self, deadline: float) -> bool:
        """Connect and LISTEN again before `deadline`; True when it worked."""
        while True:
            try:
                self._connect()
            except psycopg.OperationalError:
                pause = min(RECONNECT_PAUSE_SECONDS, deadline - time.monotonic())
                if pause <= 0:
                    return False
                time.sleep(pause)
                continue
            self.reconnects += 1
            return True


def notify_ended(db: Db, issue: int) -> None:
    """NOTIFY `hive_orders` that `issue`'s order ended: a Queen in another process rounds
    at once, so a freed key is used without waiting for her tick."""
    one(db, "notify_order_ended", {"issue": issue})
