"""The parts one process's actors are built from: the store, the checkout, the metrics,
the names actors are found by, the work registry, the bee host and the group commit of
its bees' endings.

`hive/tree.py` makes one `Runtime` per process and hands each actor only the parts it
uses (its ports). No actor imports this module; an import contract holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import ConnectionPool

from hive.actors.bee.host import BeeHost
from hive.actors.ending_group import EndingGroup
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
    endings: EndingGroup = field(init=False)

    def __post_init__(self) -> None:
        self.work = WorkRegistry(self.names)
        self.host = BeeHost(self.work)
        self.endings = EndingGroup(self.db)
