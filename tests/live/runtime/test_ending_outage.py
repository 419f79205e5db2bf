"""An ending that meets the store away (a restart, a failover) keeps trying until the
store is back: the turn's bundle and outcome are not lost to a blip, on a private
embedded server of its own (never the session's)."""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from pathlib import Path

from hive.actors.bee import ending
from hive.rules.states import Outcome
from hive.store import embedded, endings, migrate, orders
from hive.store.orders import NewOrder
from hive.store.pool import HeldConnection

# the failures the old ending gave up after (END_ATTEMPTS was 3, one second apart)
FAILURES_SEEN = 3
DEADLINE_SECONDS = 60.0


class Failures(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("ending failed"):
            self.count += 1
            if self.count >= FAILURES_SEEN:
                self.seen.set()


def test_an_ending_that_meets_the_store_away_lands_once_it_is_back():
    base = Path(tempfile.mkdtemp(prefix="hive-outage-", dir="/tmp"))
    pgdata = base / "pg"
    url = embedded.start(pgdata)
    failures = Failures()
    logging.getLogger("hive.bee").addHandler(failures)
    try:
        migrate.apply(url)
        # a held connection fails at once while the server is away (a pool's checkout
        # waits out its own timeout first, which only makes each attempt longer)
        with HeldConnection(url) as db:
            written = orders.insert(db, NewOrder(1, "queen-1", "main"), queued=True)
            assert written is orders.Insertion.WRITTEN
            claimed = orders.claim(db, "r1")
            assert claimed is not None
            assert embedded.stop(pgdata)  # the store goes away as the turn ends
            landed: list[bool] = []
            worker = threading.Thread(
                target=lambda: landed.append(
                    ending.write_ending(db, endings.OrderEnding(claimed.fence, Outcome.FINISHED))[
                        0
                    ].landed
                ),
                daemon=True,
            )
            worker.start()
            # the ending has met the outage three times (or has given up): bring it back
            while not failures.seen.wait(0.1):
                if not worker.is_alive():
                    break
            embedded.start(pgdata)
            worker.join(DEADLINE_SECONDS)
            assert landed == [True], f"the ending gave up after {failures.count} failures"
            order = orders.get(db, 1)
            assert order is not None and order.outcome == "finished"
    finally:
        logging.getLogger("hive.bee").removeHandler(failures)
        embedded.stop(pgdata)
        shutil.rmtree(base, ignore_errors=True)
