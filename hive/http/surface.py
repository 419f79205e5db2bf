"""What the routes read (`Surface`), and the one a process serves from the store.

The server knows no store and no actor: each route calls a plain callable of `Surface`,
so tests can serve fakes. `store_surface` binds the use cases of `hive.services` to a
store, readiness to a `StoreProbe` of it, and (given the process's metrics) the board's
open streams and the streams refused at the cap to their metrics.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from prometheus_client import CollectorRegistry
from psycopg_pool import PoolTimeout

from hive.board import Board
from hive.errors import HiveError
from hive.forge.github.hooks import HookAnswer
from hive.http.board_routes import BoardSource
from hive.metrics import HiveMetrics
from hive.rules.keys import key_slots
from hive.services import changes, credits, detail, issues, judgement, orders
from hive.services.database import Db, check_pooled, check_reachable
from hive.services.export import ExportSource, StoreExports
from hive.services.issues import NewIssue
from hive.settings import Settings

log = logging.getLogger("hive.http")

STORE_PROBE_TIMEOUT_SECONDS = 2.0
# a readiness answer is kept this long: a burst of probes asks the store once
PROBE_FRESH_SECONDS = 1.0
# how long the pool may take to lend a checked connection before the probe asks the
# server with a connection of its own (refused at once when the server is down)
PROBE_POOL_WAIT_SECONDS = 0.25
# who an approval through the API is recorded as: the token names no one
API_PERSON = "a holder of the API token"


@dataclass(frozen=True)
class Surface:
    """What the routes read. Each callable runs on a request thread, so it must be
    thread-safe; one that raises answers 500 (or, for readiness, not ready). A route
    whose callable is None answers 503."""

    registry: CollectorRegistry
    draining: Callable[[], bool] = lambda: False
    store_reachable: Callable[[], bool] = lambda: True
    exports: ExportSource | None = None
    orders: Callable[[], list[dict[str, Any]]] | None = None
    add_issue: Callable[[NewIssue], int] | None = None
    issue: Callable[[int], dict[str, Any]] | None = None
    approve: Callable[[int], dict[str, Any]] | None = None
    reject: Callable[[int, str], dict[str, Any]] | None = None  # the issue, the note
    cancel_order: Callable[[int], dict[str, Any]] | None = None
    close_issue: Callable[[int], dict[str, Any]] | None = None
    credit: Callable[[str], dict[str, Any]] | None = None  # an account's standing
    reopen: Callable[[int], dict[str, Any]] | None = None
    # POST /hooks/github (HIVE_FORGE=github with a webhook secret): headers and the raw
    # body in, the status and a JSON answer out; it checks the signature itself
    github_hook: Callable[[Mapping[str, str], bytes], HookAnswer] | None = None
    board: BoardSource | None = None  # the board's pages and event streams (DESIGN 10)
    # called on the server's loop thread per event stream refused at the cap (a 503)
    stream_refused: Callable[[], None] = lambda: None


def store_probe(
    url: str, timeout_seconds: float = STORE_PROBE_TIMEOUT_SECONDS
) -> Callable[[], bool]:
    """A `store_reachable` for `Surface`: one short connection per call."""

    def reachable() -> bool:
        try:
            check_reachable(url, timeout_seconds)
        except HiveError as err:
            log.warning("readiness: %s", err)
            return False
        return True

    return reachable


class StoreProbe:
    """A `store_reachable` for `Surface` that asks through the process's store `db` (its
    pool), so a probe every few seconds opens no connection: the pool lends one only
    after its check (a round trip, or a connection that answered within the last second
    and heard no goodbye since). An answer is kept PROBE_FRESH_SECONDS; one question is
    out at a time, and a caller waits for it at most STORE_PROBE_TIMEOUT_SECONDS.

    When the pool lends none within PROBE_POOL_WAIT_SECONDS (the server went away, or
    every connection is in use), the probe asks with one short connection of its own:
    refused at once when the server is down, so the answer is a prompt "unreachable".
    Thread-safe."""

    def __init__(
        self,
        db: Db,
        url: str,
        *,
        timeout_seconds: float = STORE_PROBE_TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.db = db
        self.timeout_seconds = timeout_seconds
        self.clock = clock
        self._direct = store_probe(url, timeout_seconds)
        self._asking = threading.Lock()
        self._answer = False
        self._answered_at: float | None = None

    def __call__(self) -> bool:
        if not self._asking.acquire(timeout=self.timeout_seconds):
            log.warning("readiness: the store has not answered in %g s", self.timeout_seconds)
            return False
        try:
            at = self._answered_at
            if at is not None and self.clock() - at < PROBE_FRESH_SECONDS:
                return self._answer
            self._answer = self._ask()
            self._answered_at = self.clock()
            return self._answer
        finally:
            self._asking.release()

    def _ask(self) -> bool:
        try:
            # a pool checked it as it lent it; the check again is at most one round trip
            check_pooled(self.db, PROBE_POOL_WAIT_SECONDS)
            return True
        except PoolTimeout:
            return self._direct()
        except psycopg.Error as err:
            log.warning("readiness: %s", err)
            return False


def store_surface(
    settings: Settings,
    db: Db,
    url: str,
    registry: CollectorRegistry,
    draining: Callable[[], bool],
    github_hook: Callable[[Mapping[str, str], bytes], HookAnswer] | None = None,
    *,
    metrics: HiveMetrics | None = None,
) -> Surface:
    """The `Surface` a process serves: every route on the store `db` (a pool: the routes
    run on request threads), readiness from `draining` and a probe through `db`
    (`StoreProbe`; `url` when the pool lends no connection). With `metrics` (whose
    registry is `registry`), the board's open streams and refused ones are counted."""
    keys = {k.index: k.fingerprint for k in key_slots(settings.worker_keys)}
    board = Board(db, url, keys=keys)
    stream_refused: Callable[[], None] = _uncounted
    if metrics is not None:
        metrics.watch_board(lambda: board.hub.streams)
        stream_refused = metrics.board_streams_refused.inc
    return Surface(
        registry=registry,
        draining=draining,
        store_reachable=StoreProbe(db, url),
        exports=StoreExports.from_settings(settings, db),
        orders=lambda: orders.listing(db),
        add_issue=lambda issue: issues.add(db, issue),
        issue=lambda number: detail.issue(db, number),
        approve=lambda number: _approve(db, number),
        reject=lambda number, note: _said(judgement.reject(db, number, note), number),
        cancel_order=lambda number: _said(orders.cancel(db, number), number),
        close_issue=lambda number: _close(db, number),
        credit=lambda account: credits.standing(db, account),
        reopen=lambda number: _said(changes.reopen(db, number), number),
        github_hook=github_hook,
        board=board,
        stream_refused=stream_refused,
    )


def _uncounted() -> None:
    """A refused stream, with no metrics to count it on."""


def _approve(db: Db, number: int) -> dict[str, Any]:
    done = judgement.approve(db, number, by=API_PERSON)
    return {"number": number, "attempt": done.attempt, "approved_by": done.by, "said": str(done)}


def _said(done: object, number: int) -> dict[str, Any]:
    """A person's action's answer: the issue and the sentence `hive` prints for it."""
    return {"number": number, "said": str(done)}


def _close(db: Db, number: int) -> dict[str, Any]:
    done = changes.close(db, number)
    return {
        "number": number,
        "state": "closed",
        "cancelled_attempt": done.cancelled_attempt,
        "cancelled_jobs": done.cancelled_jobs,
        "said": str(done),
    }
