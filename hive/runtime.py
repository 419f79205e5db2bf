"""The parts one process's actors are built from: the store, the checkout, the metrics,
the names actors are found by, the work registry, the bee host and the group commit of
its bees' endings.

`hive/tree.py` makes one `Runtime` per process, and each actor is handed only the parts
it uses, its ports (`bee_ports`, `claimer_ports`, ... below). No actor imports this
module; an import contract holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import ConnectionPool

from hive.actors.bee.config import BeePorts
from hive.actors.bee.host import BeeHost
from hive.actors.ending_group import EndingGroup
from hive.actors.queen.config import QueenPorts
from hive.actors.reaper.reaper import ReaperPorts
from hive.actors.runner import ClaimerPorts
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


def bee_ports(rt: Runtime) -> BeePorts:
    return BeePorts(rt.db, rt.checkout, rt.metrics, rt.names, rt.work, rt.endings)


def claimer_ports(rt: Runtime) -> ClaimerPorts:
    return ClaimerPorts(rt.db, rt.url, rt.host, rt.work, rt.metrics, rt.names, bee_ports(rt))


def queen_ports(rt: Runtime) -> QueenPorts:
    return QueenPorts(
        rt.db, rt.url, rt.checkout, rt.host, rt.work, rt.metrics, rt.names, bee_ports(rt)
    )


def reaper_ports(rt: Runtime) -> ReaperPorts:
    return ReaperPorts(rt.db, rt.checkout.workdir, rt.metrics, rt.names, rt.host.issues)
