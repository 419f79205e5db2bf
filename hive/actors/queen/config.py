"""What the Queen is given: her ports (the store, her base, the bee host, the names she
is known by) and her config (`hive/configs.py` builds it from the settings)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import ConnectionPool

from hive.actors.bee.config import BeeConfig, BeePorts, demo_bees
from hive.actors.bee.host import BeeHost
from hive.actors.work import WorkRegistry
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from hive.rules.credits import Terms
from hive.rules.keys import KeySlot
from hive.rules.leases import QUEEN_LEASE_TTL_SECONDS
from supervisors import Registry

ROUND_MAX_SECONDS = 180.0


@dataclass(frozen=True)
class QueenPorts:
    """What the Queen uses: the store and its LISTEN URL, the checkout (her base), the
    bee host (local mode), the work registry (her rounds count there; the drain), the
    metrics, the names she is known by, and what her bees use."""

    db: ConnectionPool[Any]
    listen_url: str
    checkout: Checkout
    host: BeeHost
    work: WorkRegistry
    metrics: HiveMetrics
    names: Registry
    bees: BeePorts


@dataclass(frozen=True)
class QueenConfig:
    holder: str
    tick_seconds: float = 30.0
    elsewhere: bool = False
    max_workers: int = 4
    lanes_per_key: int = 1
    bee_memory_mb: int = 1024
    provider: str = "demo"
    model: str = ""
    round_max_seconds: float = ROUND_MAX_SECONDS
    lease_ttl_seconds: float = QUEEN_LEASE_TTL_SECONDS
    keys: tuple[KeySlot, ...] = ()
    spend_cap_usd: float = 0.0  # a UTC day's spend that stops new orders (0: no cap)
    credits: Terms | None = None  # HIVE_CREDITS=on: how turns are sold (None: off)
    repo_url: str | None = None  # base is refreshed from it before each round
    bee: BeeConfig = field(default_factory=demo_bees)  # her own bees (local mode)
