"""How many connections to the store one process may hold (issue 15: 64 runners on one
server within `max_connections`).

A process holds at most IDLE_CONNECTIONS while no bee runs in it and BUSY_CONNECTIONS
while one or more do, its LISTEN connection included. Every loop of a process shares one
LISTEN connection; every other caller (claims, heartbeats, transcripts, endings, the
reaper, the HTTP routes) shares one pool, sized here by the bees running.
"""

from __future__ import annotations

IDLE_CONNECTIONS = 2
BUSY_CONNECTIONS = 3


def connection_budget(bees_running: int) -> int:
    """Connections the whole process may hold with `bees_running` bees in it."""
    return BUSY_CONNECTIONS if bees_running > 0 else IDLE_CONNECTIONS


def pool_size(bees_running: int, listens: bool) -> int:
    """The shared pool's limit: the budget less the LISTEN connection when the process
    listens. Never below 1: a process always has a connection to work with."""
    return max(1, connection_budget(bees_running) - (1 if listens else 0))


def within_budget(held: int, bees_running: int) -> bool:
    """Whether `held` connections (LISTEN included) keep to the budget."""
    return held <= connection_budget(bees_running)


def seen_due(since_seconds: float | None, changed: bool, every_seconds: float) -> bool:
    """Whether a claim pass writes its runner's row (seen_at, running, draining): the
    first time (`since_seconds` None), when what it reports changed, or once
    `every_seconds` (the runner's poll) passed since the last write. A NOTIFY wakes every
    runner, so writing on each pass cost one UPDATE per runner per order."""
    return since_seconds is None or changed or since_seconds >= every_seconds
