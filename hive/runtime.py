"""What the actors of one process share: the store, the checkout (with its lock), the
metrics, the names the actors are found by, the work registry and the bee host.

One `Runtime` per process, made by `hive/tree.py`. Nothing here decides anything, and
nothing here is a message (actors tell one another `hive.actors.messages` by name) or
a setting (each actor gets its own frozen config from the tree).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import ConnectionPool

from hive.actors.host import BeeHost
from hive.actors.work import WorkRegistry
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from supervisors import Registry


@dataclass
class Runtime:
    db: ConnectionPool[Any]
    url: str  # the store's, for a LISTEN of its own
    checkout: Checkout
    metrics: HiveMetrics = field(default_factory=HiveMetrics)
    names: Registry = field(default_factory=Registry)
    work: WorkRegistry = field(init=False)
    host: BeeHost = field(init=False)

    def __post_init__(self) -> None:
        self.work = WorkRegistry(self.names)
        self.host = BeeHost(self.work)
