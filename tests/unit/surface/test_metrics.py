"""The metrics of DESIGN 8, scraped over HTTP and read back with prometheus-client's own
text parser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from hive.http import Surface
from hive.metrics import HiveMetrics, QueueNumbers
from hive.metrics.github import (
    GITHUB_METHODS,
    GITHUB_RETRY_REASONS,
    GITHUB_STATUSES,
    github_method,
    github_status,
)
from hive.rules.forge_limits import Pause

from .helpers import call_once

# DESIGN 8, as written there (plus DESIGN 5's stalled rounds), with each metric's type
DESIGN_METRICS = {
    "hive_orders_queued": "gauge",
    "hive_orders_in_flight": "gauge",
    "hive_oldest_queued_seconds": "gauge",
    "hive_claims_total": "counter",
    "hive_claim_seconds": "histogram",
    "hive_bees_running": "gauge",
    "hive_sandbox_info": "gauge",
    "hive_bee_seconds": "histogram",
    "hive_heartbeats_total": "counter",
    "hive_heartbeat_lost_total": "counter",
    "hive_reaped_total": "counter",
    "hive_key_refusals_total": "counter",
    "hive_drain_held": "gauge",
    "hive_handed_back_total": "counter",
    "hive_bundle_bytes": "histogram",
    "hive_rounds_total": "counter",
    "hive_reviews_total": "counter",
    "hive_review_failures_total": "counter",
    "hive_rounds_stalled_total": "counter",
    # DESIGN 10 and RULES 4
    "hive_illegal_transitions_total": "counter",
    "hive_checks_total": "counter",
    "hive_merges_total": "counter",
    "hive_issue_to_merge_seconds": "histogram",
    "hive_build_info": "gauge",
    "hive_spend_usd_total": "counter",  # lesson module 7
    "hive_credit_tokens_total": "counter",  # seed module 7, issue 31
    # retention (issue 12)
    "hive_pruned_total": "counter",
    # the board's event streams and the GitHub client
    "hive_board_streams": "gauge",
    "hive_board_streams_refused_total": "counter",
    "hive_github_requests_total": "counter",
    "hive_github_retries_total": "counter",
    "hive_github_rate_limit_remaining": "gauge",
    # the chat (DESIGN 11, agents among themselves)
    "hive_chat_messages_total": "counter",
    "hive_chat_held_total": "counter",
    "hive_chat_dropped_total": "counter",
    "hive_chat_answer_seconds": "histogram",
    "hive_chat_turns_total": "counter",
}
DOCS = Path(__file__).resolve().parents[3] / "docs" / "metrics.md"


def scrape(metrics: HiveMetrics) -> dict[str, Metric]:
    answer = call_once(Surface(registry=metrics.registry), "GET", "/metrics")
    assert answer.status == 200
    assert answer.headers["Content-Type"].startswith("text/plain")
    families = {}
    for family in text_string_to_metric_families(answer.body.decode()):
        # the text parser strips a counter's _total; the name on the wire is what users see
        name = family.name + "_total" if family.type == "counter" else family.name
        families[name] = family
    return families


def sample(families: dict[str, Metric], name: str, suffix: str = "", **labels: str) -> float:
    for s in families[name].samples:
        if s.name == name.removesuffix("_total") + suffix and s.labels == labels:
            return float(s.value)
    raise AssertionError(f"no sample {name}{suffix} {labels}")


def test_every_metric_of_the_design_is_exposed_with_its_type_and_help():
    metrics = HiveMetrics()
    metrics.watch_queue(lambda: QueueNumbers(queued=0, in_flight=0, oldest_queued_seconds=0.0))
    families = scrape(metrics)
    for name, kind in DESIGN_METRICS.items():
        assert name in families, name
        assert families[name].type == kind, name
        assert families[name].documentation, name


def test_queue_numbers_are_read_at_scrape_time():
    numbers = [QueueNumbers(queued=3, in_flight=5, oldest_queued_seconds=42.5)]
    metrics = HiveMetrics()
    metrics.watch_queue(lambda: numbers[0])
    families = scrape(metrics)
    assert sample(families, "hive_orders_queued") == 3
    assert sample(families, "hive_orders_in_flight") == 5
    assert sample(families, "hive_oldest_queued_seconds") == 42.5
    numbers[0] = QueueNumbers(queued=0, in_flight=1, oldest_queued_seconds=0.0)
    assert sample(scrape(metrics), "hive_orders_queued") == 0


def test_a_store_that_fails_leaves_the_queue_gauges_empty_and_the_scrape_whole():
    def unreachable() -> QueueNumbers:
        raise ConnectionError("store down")

    metrics = HiveMetrics()
    metrics.watch_queue(unreachable)
    metrics.claims.inc()
    families = scrape(metrics)
    assert families["hive_orders_queued"].samples == []
    assert sample(families, "hive_claims_total", "_total") == 1


def test_registering_the_queue_reader_does_not_call_it():
    calls: list[int] = []

    def reader() -> QueueNumbers:
        calls.append(1)
        return QueueNumbers(0, 0, 0.0)

    HiveMetrics().watch_queue(reader)
    assert calls == []


def test_the_queue_reader_is_watched_once():
    metrics = HiveMetrics()
    metrics.watch_queue(lambda: QueueNumbers(0, 0, 0.0))
    with pytest.raises(RuntimeError):
        metrics.watch_queue(lambda: QueueNumbers(0, 0, 0.0))


def test_increments_show_with_their_labels():
    metrics = HiveMetrics()
    metrics.claims.inc()
    metrics.claim_seconds.observe(0.02)
    metrics.bee_seconds.labels(outcome="finished").observe(1800)
    metrics.reaped.labels(reaper="stall").inc(2)
    metrics.reviews.labels(verdict="accept").inc()
    metrics.drain_held.set(3)
    metrics.bundle_bytes.observe(5000)
    families = scrape(metrics)
    assert sample(families, "hive_claims_total", "_total") == 1
    assert sample(families, "hive_claim_seconds", "_count") == 1
    assert sample(families, "hive_bee_seconds", "_bucket", outcome="finished", le="1800.0") == 1
    assert sample(families, "hive_bee_seconds", "_bucket", outcome="finished", le="1200.0") == 0
    assert sample(families, "hive_reaped_total", "_total", reaper="stall") == 2
    assert sample(families, "hive_reaped_total", "_total", reaper="boot") == 0
    assert sample(families, "hive_reviews_total", "_total", verdict="accept") == 1
    assert sample(families, "hive_reviews_total", "_total", verdict="sendback") == 0
    assert sample(families, "hive_drain_held") == 3
    assert sample(families, "hive_bundle_bytes", "_sum") == 5000


def test_two_instances_never_share_a_counter():
    first, second = HiveMetrics(), HiveMetrics()
    first.claims.inc()
    assert sample(scrape(second), "hive_claims_total", "_total") == 0


def test_buckets_fit_quick_claims_and_hour_long_turns():
    metrics = HiveMetrics()
    metrics.claim_seconds.observe(0.003)
    metrics.bee_seconds.labels(outcome="finished").observe(3 * 3600)
    families = scrape(metrics)
    claim_les = [
        float(s.labels["le"]) for s in families["hive_claim_seconds"].samples if "le" in s.labels
    ]
    turn_les = [
        float(s.labels["le"]) for s in families["hive_bee_seconds"].samples if "le" in s.labels
    ]
    assert min(claim_les) <= 0.005 and max(x for x in claim_les if x != float("inf")) >= 60
    assert max(x for x in turn_les if x != float("inf")) == 7200
    assert min(turn_les) <= 1


def test_a_scraper_that_asks_for_openmetrics_gets_it_with_units():
    from prometheus_client.openmetrics.parser import (
        text_string_to_metric_families as openmetrics_families,
    )

    metrics = HiveMetrics()
    metrics.watch_queue(lambda: QueueNumbers(1, 2, 3.0))
    accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
    surface = Surface(registry=metrics.registry)
    answer = call_once(surface, "GET", "/metrics", headers={"Accept": accept})
    assert answer.headers["Content-Type"].startswith("application/openmetrics-text")
    units = {f.name: f.unit for f in openmetrics_families(answer.body.decode())}
    assert units["hive_claim_seconds"] == "seconds"
    assert units["hive_bundle_bytes"] == "bytes"
    assert units["hive_oldest_queued_seconds"] == "seconds"
    # the process and Python collectors' families are there too, and are not the hive's
    assert len([name for name in units if name.startswith("hive_")]) == len(DESIGN_METRICS)


def test_spend_is_counted_by_key_index_and_never_goes_down():
    metrics = HiveMetrics()
    metrics.spend(0, 0.5)
    metrics.spend(0, 0.25)
    metrics.spend(1, 2.0)
    metrics.spend(None, 1.0)  # an order without a key
    metrics.spend(1, -3.0)  # a negative figure adds nothing
    families = scrape(metrics)
    assert sample(families, "hive_spend_usd_total", "_total", key_index="0") == 0.75
    assert sample(families, "hive_spend_usd_total", "_total", key_index="1") == 2.0
    assert sample(families, "hive_spend_usd_total", "_total", key_index="none") == 1.0


def test_credit_tokens_are_the_ledgers_sums_read_at_scrape_time():
    metrics = HiveMetrics()
    assert sample(scrape(metrics), "hive_credit_tokens_total", "_total", kind="burned") == 0
    sums = {"grant": 100, "sale": 7}
    metrics.watch_credits(lambda: sums)
    families = scrape(metrics)
    assert sample(families, "hive_credit_tokens_total", "_total", kind="granted") == 100
    assert sample(families, "hive_credit_tokens_total", "_total", kind="sold") == 7
    assert sample(families, "hive_credit_tokens_total", "_total", kind="burned") == 0
    sums["burn"] = 3
    assert sample(scrape(metrics), "hive_credit_tokens_total", "_total", kind="burned") == 3

    def away() -> dict[str, int]:
        raise OSError("the store is away")

    metrics.watch_credits(away)  # the scrape still answers, at zero
    assert sample(scrape(metrics), "hive_credit_tokens_total", "_total", kind="sold") == 0


def test_board_streams_are_read_from_the_hub_at_scrape_time():
    metrics = HiveMetrics()
    assert sample(scrape(metrics), "hive_board_streams") == 0  # no hub watched yet
    open_now = [3]
    metrics.watch_board(lambda: open_now[0])
    assert sample(scrape(metrics), "hive_board_streams") == 3
    open_now[0] = 0
    assert sample(scrape(metrics), "hive_board_streams") == 0
    metrics.board_streams_refused.inc()
    assert sample(scrape(metrics), "hive_board_streams_refused_total", "_total") == 1


def test_the_rate_limit_left_has_no_sample_until_github_answered():
    metrics = HiveMetrics()
    assert scrape(metrics)["hive_github_rate_limit_remaining"].samples == []
    github = metrics.github()
    github.answered("GET", 200, None)  # an answer without the header keeps nothing
    assert scrape(metrics)["hive_github_rate_limit_remaining"].samples == []
    github.answered("GET", 200, 4999)
    github.answered("GET", 403, 0)
    assert sample(scrape(metrics), "hive_github_rate_limit_remaining") == 0


def test_github_requests_have_closed_labels_exported_at_zero_once_a_client_counts():
    metrics = HiveMetrics()
    assert scrape(metrics)["hive_github_requests_total"].samples == []  # declared, empty
    github = metrics.github()
    github.answered("get", 200, None)
    github.answered("GET", 304, None)
    github.answered("PROPFIND", 999, None)
    github.answered("POST", 0, None)
    families = scrape(metrics)
    pairs = {
        (s.labels["method"], s.labels["status"]): s.value
        for s in families["hive_github_requests_total"].samples
    }
    assert set(pairs) == {(m, s) for m in GITHUB_METHODS for s in GITHUB_STATUSES}
    assert pairs[("GET", "2xx")] == 1 and pairs[("GET", "304")] == 1
    assert pairs[("other", "other")] == 1 and pairs[("POST", "unreachable")] == 1
    assert sum(pairs.values()) == 4
    for reason in ("rate_limit", "secondary_rate_limit", "server_error"):
        assert sample(families, "hive_github_retries_total", "_total", reason=reason) == 0


def test_every_pause_the_client_waits_out_has_a_retry_reason():
    assert set(GITHUB_RETRY_REASONS) == set(Pause) - {Pause.NONE}
    metrics = HiveMetrics()
    for why in GITHUB_RETRY_REASONS:
        metrics.github().retried(why)
    families = scrape(metrics)
    for reason in GITHUB_RETRY_REASONS.values():
        assert sample(families, "hive_github_retries_total", "_total", reason=reason) == 1


def test_a_status_label_is_its_class_with_304_apart():
    assert [github_status(n) for n in (0, 200, 201, 204, 301, 304, 404, 422, 429, 502)] == [
        "unreachable", "2xx", "2xx", "2xx", "3xx", "304", "4xx", "4xx", "4xx", "5xx",
    ]  # fmt: skip
    assert github_status(100) == github_status(600) == "other"
    assert [github_method(m) for m in ("GET", "patch", "HEAD")] == ["GET", "PATCH", "other"]


def test_docs_metrics_lists_every_hive_metric_a_scrape_carries():
    metrics = HiveMetrics()
    metrics.watch_queue(lambda: QueueNumbers(0, 0, 0.0))
    scraped = {name for name in scrape(metrics) if name.startswith("hive_")}
    exported = DOCS.read_text().split("## What is exported", 1)[1].split("\n## ", 1)[0]
    documented = {
        name
        for row in exported.splitlines()
        if row.startswith("| `hive_")
        for name in re.findall(r"`(hive_[a-z_]+)`", row.split("|")[1])
    }
    assert documented == scraped


def test_the_labelled_counters_a_fresh_hive_shows_start_at_zero():
    """Checks by every result and the spend of each key (and of no key) are exported at
    0 once the settings name them, so the dashboard shows 0, not "No data"."""
    from hive.agents.checks import CheckResult
    from hive.metrics.declared import CHECK_RESULTS

    assert tuple(r.value for r in CheckResult) == CHECK_RESULTS
    metrics = HiveMetrics()
    metrics.expect(checks=["unit", "lint"], key_indexes=[0, 1])
    metrics.expect(checks=["unit"], key_indexes=[0])  # again: no harm
    families = scrape(metrics)
    for check in ("unit", "lint"):
        for result in CHECK_RESULTS:
            labels = {"check": check, "result": result}
            assert sample(families, "hive_checks_total", "_total", **labels) == 0
    for key in ("0", "1", "none"):
        assert sample(families, "hive_spend_usd_total", "_total", key_index=key) == 0
