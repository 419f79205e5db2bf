"""The API, readiness and the scrape-time queue numbers against the real database."""

from __future__ import annotations

import threading
from datetime import timedelta

import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from hive.http import Surface
from hive.metrics import HiveMetrics, QueueNumbers
from hive.rules.keys import key_fingerprint
from hive.services import orders as order_service
from hive.store import issues, orders
from tests.unit.surface.helpers import bearer, call, call_once, post_json

from .conftest import TOKEN

pytestmark = pytest.mark.live


def gauges(body: bytes) -> dict[str, float]:
    found = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name.startswith(("hive_orders_", "hive_oldest_")):
                found[sample.name] = sample.value
    return found


def test_post_issue_creates_the_row_and_answers_its_number(world, serve):
    server = serve(token=TOKEN)
    body = {
        "title": "Add a greeting",
        "body": "Say hello in greet.py",
        "labels": ["P1"],
        "boundary": ["greet.py"],
        "criteria": ["greet() returns hello"],
    }
    first = post_json(server, "/api/issues", body, token=TOKEN)
    second = post_json(server, "/api/issues", {"title": "Another"}, token=TOKEN)
    assert (first.status, first.json()) == (201, {"number": 1})
    assert second.json() == {"number": 2}
    stored = issues.get(world.db, 1)
    assert stored is not None
    assert (stored.title, stored.body, stored.labels) == ("Add a greeting", body["body"], ["P1"])
    assert (stored.boundary, stored.criteria) == (["greet.py"], ["greet() returns hello"])


def test_a_bad_issue_writes_nothing(world, serve):
    answer = post_json(serve(), "/api/issues", {"title": "x", "boundary": "greet.py"})
    assert answer.status == 400
    assert answer.json()["error"].startswith("boundary:")
    assert issues.listing(world.db) == []


def test_orders_are_listed_without_their_brief(world, serve):
    world.queue_order(3)
    server = serve(token=TOKEN)
    answer = call(server, "GET", "/api/orders", headers=bearer(TOKEN))
    assert answer.status == 200
    (row,) = answer.json()
    assert (row["issue"], row["branch"], row["claimed_by"]) == (3, "queen-3", None)
    assert row["queued_at"] is not None
    assert "brief" not in row


def test_queue_numbers_come_from_the_store_at_scrape_time(world, serve):
    server = serve()
    before = gauges(call(server, "GET", "/metrics").body)
    assert before == {
        "hive_orders_queued": 0,
        "hive_orders_in_flight": 0,
        "hive_oldest_queued_seconds": 0,
    }
    world.queue_order(1)
    world.queue_order(2)
    orders.claim(world.db, "runner-1")
    after = gauges(call(server, "GET", "/metrics").body)
    assert after["hive_orders_queued"] == 1
    assert after["hive_orders_in_flight"] == 2
    assert after["hive_oldest_queued_seconds"] >= 0


def test_readyz_asks_the_real_store_and_the_drain(world, serve):
    draining = threading.Event()
    server = serve(draining=draining.is_set)
    assert call(server, "GET", "/readyz").status == 200
    draining.set()
    assert call(server, "GET", "/readyz").json()["error"] == "draining"


def test_no_key_value_appears_in_metrics_or_orders(world, serve):
    key = "sk-live-do-not-leak-0123456789"
    new = orders.NewOrder(
        issue=9, branch="queen-9", base="main", key_index=0, key_fingerprint=key_fingerprint(key)
    )
    orders.insert(world.db, new, queued=True)
    server = serve()
    listed = call(server, "GET", "/api/orders").body.decode()
    assert key_fingerprint(key) in listed
    for path in ("/api/orders", "/metrics", "/queen/export"):
        assert key not in call(server, "GET", path).body.decode(), path


def test_a_lost_store_connection_is_503_not_a_traceback(world, caplog):
    lost = psycopg.connect(world.db_url, autocommit=True)
    lost.close()
    surface = Surface(HiveMetrics().registry, orders=lambda: order_service.listing(lost))
    answer = call_once(surface, "GET", "/api/orders")
    assert answer.status == 503
    assert answer.json() == {"error": "the store is unreachable; try again"}
    assert not [r for r in caplog.records if r.exc_info]


def test_the_oldest_queued_age_is_measured_from_queued_at(world):
    first = world.queue_order(1)
    world.queue_order(2)
    assert first.queued_at is not None
    later = first.queued_at + timedelta(seconds=90)
    numbers = order_service.queue_numbers(world.db, now=lambda: later)
    assert numbers == QueueNumbers(queued=2, in_flight=2, oldest_queued_seconds=90.0)
