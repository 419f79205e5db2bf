"""GET /readyz asks the store through the process's pool (`hive.http.surface.StoreProbe`):
probes open no connection of their own, an answer is at most a second old, and once the
store goes away the answer is a prompt 503 "store unreachable". Connections are counted
on their way to the real server (`relay.Relay`)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from hive.http import ExportServer, HttpConfig, store_surface
from hive.http import surface as surface_module
from hive.metrics import HiveMetrics
from hive.store.pool import BudgetPool, budget_pool
from hive.swarm import wait_for
from tests.unit.surface.helpers import Answer, call

from .conftest import settings_for
from .relay import Relay

PROBES = 10
GONE_SECONDS = 10.0  # a deadline for the first 503, not a measure of it
# what one probe may take while the store is gone: far below the pool's own 30 s wait
# for a connection (the fault this guards against), not a measure of it
PROMPT_SECONDS = 10.0


@pytest.fixture
def relay(hive_db_url: str) -> Iterator[Relay]:
    made = Relay(hive_db_url)
    yield made
    made.cut()


@pytest.fixture
def store(relay: Relay) -> Iterator[BudgetPool]:
    """The process's pool, as `hive serve` makes it (an idle runner's: one connection)."""
    db = budget_pool(relay.url, limit=1)
    yield db
    db.close()


@pytest.fixture
def server(world, relay: Relay, store: BudgetPool) -> Iterator[ExportServer]:
    surface = store_surface(
        settings_for(world), store, relay.url, HiveMetrics().registry, lambda: False
    )
    running = ExportServer(HttpConfig(port=0), surface)
    running.start()
    yield running
    running.stop()


def test_readiness_probes_ride_on_the_pool_and_open_no_connection_each(server, relay, monkeypatch):
    # every probe asks the store (no answer is kept), as probes seconds apart do
    monkeypatch.setattr(surface_module, "PROBE_FRESH_SECONDS", 0.0, raising=False)
    opened = relay.accepted  # the pool's own
    for _ in range(PROBES):
        answer = call(server, "GET", "/readyz")
        assert (answer.status, answer.json()) == (200, {"ready": True})
    assert relay.accepted == opened


def test_readyz_is_a_prompt_503_once_the_store_is_gone_and_200_when_it_is_back(server, relay):
    assert call(server, "GET", "/readyz").status == 200
    relay.cut()

    def probe() -> tuple[Answer, float]:
        started = time.monotonic()
        answer = call(server, "GET", "/readyz")
        return answer, time.monotonic() - started

    def unready() -> tuple[Answer, float] | None:
        got = probe()
        return got if got[0].status == 503 else None

    answer, took = wait_for(unready, GONE_SECONDS, "/readyz says the store is unreachable")
    assert answer.json() == {"ready": False, "error": "store unreachable"}
    assert took < PROMPT_SECONDS
    for _ in range(3):  # and again, each promptly
        answer, took = probe()
        assert answer.status == 503 and took < PROMPT_SECONDS

    relay.mend()
    wait_for(
        lambda: call(server, "GET", "/readyz").status == 200,
        GONE_SECONDS,
        "/readyz ready again",
    )


def test_a_readiness_answer_is_kept_a_second_and_no_longer(relay, store):
    now = [0.0]
    probe = surface_module.StoreProbe(store, relay.url, clock=lambda: now[0])
    assert probe()
    relay.cut()
    now[0] += surface_module.PROBE_FRESH_SECONDS / 2
    assert probe()  # a burst of probes asks once
    now[0] += surface_module.PROBE_FRESH_SECONDS
    assert not probe()


def test_a_pool_whose_every_connection_is_busy_leaves_the_process_ready(server, store, monkeypatch):
    monkeypatch.setattr(surface_module, "PROBE_FRESH_SECONDS", 0.0, raising=False)
    with store.connection():  # a long export holds the idle runner's one connection
        answer = call(server, "GET", "/readyz")
    assert (answer.status, answer.json()) == (200, {"ready": True})
