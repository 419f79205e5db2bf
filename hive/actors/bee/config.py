"""What a bee is given besides its order: the config every bee of this process shares,
and the ports a bee uses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import ConnectionPool

from hive.actors.bee.ending import Accounting
from hive.actors.bee.start import StartConfig
from hive.actors.ending_group import EndingGroup
from hive.actors.work import WorkRegistry
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from supervisors import Registry


@dataclass(frozen=True)
class BeeConfig:
    """What every bee of this process shares. It says how a turn starts, how often a
    runner's bee renews its claim (HIVE_RUNNER_SECONDS) and the largest bundle it
    stores."""

    start: StartConfig
    heartbeat_seconds: float = 15.0
    bundle_max_bytes: int = 100 * 1024 * 1024
    # a runner's turn is killed by its warden when its claim goes unrenewed this long
    fence_seconds: float | None = None
    # how an ending is priced and rests its key (the packaged price table by default)
    accounting: Accounting = field(default_factory=Accounting.packaged)


@dataclass(frozen=True)
class BeePorts:
    """What a bee uses. It holds the store, the checkout, the metrics and the names it
    tells when it ends. It holds the work registry, where a newer attempt of its issue
    may count. It holds the process's group commit, which its ending goes through."""

    db: ConnectionPool[Any]
    checkout: Checkout
    metrics: HiveMetrics
    names: Registry
    work: WorkRegistry
    # the process's group commit of endings (None: each ending is written alone)
    endings: EndingGroup | None = None


def demo_bees() -> BeeConfig:
    """Bees with the built-in demo agent and every other default. The price table is
    read when a config is made, not when this module is imported."""
    return BeeConfig(StartConfig("demo"))
