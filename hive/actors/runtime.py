"""What the actors of one process share: the store, the checkout (with its lock), the
metrics, the work registry, the bee host, and two signals (draining, wake the Queen).

One `Runtime` per process, made by `hive/tree.py`. Nothing here decides anything.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import ConnectionPool

from hive.actors.host import BeeHost
from hive.actors.work import WorkRegistry
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from hive.settings import Settings


@dataclass
class Runtime:
    settings: Settings
    db: ConnectionPool[Any]
    url: str
    checkout: Checkout | None
    metrics: HiveMetrics = field(default_factory=HiveMetrics)
    work: WorkRegistry = field(default_factory=WorkRegistry)
    host: BeeHost = field(default_factory=BeeHost)
    draining: threading.Event = field(default_factory=threading.Event)
    # set when an order ends or is reaped here, so the Queen rounds at once
    queen_wake: threading.Event = field(default_factory=threading.Event)
    # set when the drain begins, so the claimer reports it in queen_runner at once, and
    # when a bee has freed its slot, so the claimer fills it at once
    runner_wake: threading.Event = field(default_factory=threading.Event)

    @property
    def name(self) -> str:
        """This process's name in the store (claims, the Queen lease)."""
        return self.settings.runner_name

    def begin_drain(self) -> None:
        """Readiness goes 503, the claimer stops claiming, no bee starts here."""
        self.draining.set()
        self.host.close()
        self.runner_wake.set()

    def tree_started(self) -> None:
        """Every child is up (the bee pool too): the Queen's first round that could not
        start a bee here need not wait for her next tick."""
        self.queen_wake.set()
