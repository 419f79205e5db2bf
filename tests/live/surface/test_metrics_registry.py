"""What a real scrape of /metrics carries beside the hive's own metrics: the process and
Python collectors, hive_build_info, outcome codes, and never a `_created` series."""

from __future__ import annotations

import platform
from collections.abc import Iterator

import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

import hive
from hive.http import ExportServer, HttpConfig, store_surface
from hive.metrics import HiveMetrics
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.states import reaped_no_completion
from hive.services.orders import queue_numbers
from tests.unit.surface.helpers import call

from .conftest import World, settings_for

pytestmark = pytest.mark.live

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


@pytest.fixture
def scraped(world: World) -> Iterator[tuple[HiveMetrics, ExportServer]]:
    metrics = HiveMetrics()
    metrics.watch_queue(lambda: queue_numbers(world.db))
    surface = store_surface(
        settings_for(world), world.db, world.db_url, metrics.registry, lambda: False
    )
    server = ExportServer(HttpConfig(port=0), surface)
    server.start()
    try:
        yield metrics, server
    finally:
        server.stop()


def test_a_scrape_has_no_created_series_in_either_format(scraped) -> None:
    metrics, server = scraped
    metrics.claims.inc()
    metrics.turn_ended("finished", 3.0)
    metrics.claim_seconds.observe(0.2)
    text = call(server, "GET", "/metrics").body.decode()
    assert "hive_claims_total 1.0" in text
    assert "_created" not in text
    answer = call(server, "GET", "/metrics", headers={"Accept": OPENMETRICS})
    assert answer.headers["Content-Type"].startswith("application/openmetrics-text")
    om = answer.body.decode()
    assert "hive_claims_total 1.0" in om and "_created" not in om
    names = {s.name for f in openmetrics_families(om) for s in f.samples}
    assert not [n for n in names if n.endswith("_created")]


def test_a_scrape_has_the_process_and_python_collectors_and_build_info(scraped) -> None:
    _, server = scraped
    families = {
        f.name: f
        for f in text_string_to_metric_families(call(server, "GET", "/metrics").body.decode())
    }
    for name in (
        "process_cpu_seconds",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
        "python_info",
        "python_gc_collections",
    ):
        assert name in families, name
    [build] = families["hive_build_info"].samples
    assert build.value == 1
    assert build.labels["version"] == hive.__version__
    assert build.labels["python"] == platform.python_version()
    assert build.labels["dulwich"] not in ("", "unknown")
    assert build.labels["psycopg"] not in ("", "unknown")


def test_outcome_labels_are_codes_never_sentences(scraped) -> None:
    metrics, server = scraped
    metrics.turn_ended("ended badly", 7200.0)
    metrics.turn_ended("handed back", 12.0)
    metrics.turn_ended("something nobody declared", 1.0)
    metrics.turn_ended(reaped_no_completion(120), 1.0)  # a turn never ends so: no code
    families = text_string_to_metric_families(call(server, "GET", "/metrics").body.decode())
    counts = {
        s.labels["outcome"]: s.value
        for f in families
        for s in f.samples
        if s.name == "hive_bee_seconds_count"
    }
    assert set(counts) == {code.value for code in OutcomeCode}  # all there from the start
    assert counts["ended_badly"] == 1
    assert counts["handed_back"] == 1
    assert counts["other"] == 2
    assert counts["finished"] == 0
