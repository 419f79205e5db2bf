"""The board's event streams on the process's metrics: `hive_board_streams` follows the
streams the hub holds, and a stream refused at the cap counts on
`hive_board_streams_refused_total`, both in a real scrape."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hive.http import ExportServer, HttpConfig, store_surface
from hive.metrics import HiveMetrics
from hive.swarm import wait_for
from tests.live.surface.conftest import settings_for
from tests.unit.surface.helpers import call

from .sse import Stream

pytestmark = pytest.mark.live


@pytest.fixture
def served(world) -> Iterator[tuple[HiveMetrics, ExportServer]]:
    metrics = HiveMetrics()
    surface = store_surface(
        settings_for(world),
        world.db,
        world.db_url,
        metrics.registry,
        lambda: False,
        metrics=metrics,
    )
    server = ExportServer(HttpConfig(port=0, streams_max=2), surface)
    server.start()
    try:
        yield metrics, server
    finally:
        server.stop()


def streams(metrics: HiveMetrics) -> float | None:
    return metrics.registry.get_sample_value("hive_board_streams")


def scraped(server: ExportServer, name: str) -> float:
    text = call(server, "GET", "/metrics").body.decode()
    (value,) = [
        s.value for f in text_string_to_metric_families(text) for s in f.samples if s.name == name
    ]
    return float(value)


def test_an_open_stream_counts_one_and_its_close_brings_the_gauge_back_to_zero(served):
    metrics, server = served
    assert streams(metrics) == 0
    board = Stream(server.port, "/board/events")
    page = None
    try:
        assert board.status == 200 and board.next().name == "snapshot"
        assert streams(metrics) == 1
        assert scraped(server, "hive_board_streams") == 1
        page = Stream(server.port, "/board/events?issue=1")  # an issue page's stream
        assert page.status == 200
        assert streams(metrics) == 2  # the hub took it before the answer's head was sent
    finally:
        board.close()
        if page is not None:
            page.close()
    wait_for(lambda: streams(metrics) == 0, 10, "the closed streams leave the hub")


def test_a_stream_over_the_cap_is_counted_refused(served):
    metrics, server = served
    first, second = Stream(server.port, "/board/events"), Stream(server.port, "/board/events")
    try:
        assert first.next().name == second.next().name == "snapshot"
        refused = Stream(server.port, "/board/events")
        assert refused.status == 503
        refused.close()
        assert streams(metrics) == 2
        assert scraped(server, "hive_board_streams_refused_total") == 1
    finally:
        first.close()
        second.close()
