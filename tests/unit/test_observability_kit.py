"""config/prometheus and config/grafana checked by promtool: the alert rules are valid and
each alert's unit tests pass (firing and quiet), and every PromQL expression of the
dashboard parses and names only metrics a real scrape of the hive carries."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from hive.http import Surface
from hive.metrics import HiveMetrics, QueueNumbers
from tests.unit.surface.helpers import call_once

CONFIG = Path(__file__).resolve().parents[2] / "config"
ALERTS = CONFIG / "prometheus" / "alerts.yml"
ALERT_TESTS = CONFIG / "prometheus" / "alerts.test.yml"
DASHBOARD = CONFIG / "grafana" / "hive.json"
PROMTOOL = shutil.which("promtool")

needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not installed (make system installs it)"
)

# what may appear in an expression and is not a metric's name
PROMQL_WORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "inf",
    "nan",
}
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def promtool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def dashboard_exprs() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    found = [t["expr"] for p in panels for t in p.get("targets", [])]
    assert len(found) >= 20
    return found


def metric_names(expr: str) -> set[str]:
    """The metric names in a PromQL expression: identifiers that are neither a function,
    a keyword, nor a label name (inside braces or a by/without/on/ignoring list)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range selectors
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set()
    for match in _IDENT.finditer(text):
        word = match.group()
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or word.lower() in PROMQL_WORDS:
            continue
        names.add(word)
    return names


# the series each type of family carries (a labelled family with no child yet, such as
# hive_checks_total before the first check, is declared in the scrape with no sample)
SERIES_SUFFIXES = {
    "counter": ("_total",),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum"),
    "info": ("_info",),
}


def scraped_names() -> set[str]:
    """Every series name a real scrape of the hive's /metrics declares or carries."""
    metrics = HiveMetrics()
    metrics.watch_queue(lambda: QueueNumbers(1, 2, 3.0))
    answer = call_once(Surface(registry=metrics.registry), "GET", "/metrics")
    assert answer.status == 200
    names = set()
    for family in text_string_to_metric_families(answer.body.decode()):
        names |= {s.name for s in family.samples}
        names |= {family.name + suffix for suffix in SERIES_SUFFIXES.get(family.type, ())}
    return names


@needs_promtool
def test_the_alert_rules_pass_promtool_check() -> None:
    done = promtool("check", "rules", str(ALERTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


@needs_promtool
def test_every_alert_is_unit_tested_firing_and_quiet_and_the_tests_pass() -> None:
    done = promtool("test", "rules", ALERT_TESTS.name, cwd=ALERT_TESTS.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    alerts = {r["alert"] for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]}
    fired, quiet = set(), set()
    for case in yaml.safe_load(ALERT_TESTS.read_text())["tests"]:
        for check in case.get("alert_rule_test", []):
            (fired if check["exp_alerts"] else quiet).add(check["alertname"])
    assert fired == alerts and quiet == alerts


def test_the_alert_rules_name_only_metrics_the_hive_exports() -> None:
    exported = scraped_names() | {"up"}  # Prometheus' own series of each target
    rules = [r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]
    for rule in rules:
        named = metric_names(rule["expr"])
        assert named and named <= exported, (rule["alert"], named - exported)


def test_every_alert_links_its_section_of_the_runbook() -> None:
    """A `runbook_url` on every alert, ending in docs/runbook.md#<anchor> of a heading
    that is there and says what to look at and what to do."""
    runbook = (CONFIG.parent / "docs" / "runbook.md").read_text()
    sections = dict(re.findall(r"^## (\S+)\n(.*?)(?=^## |\Z)", runbook, re.M | re.S))
    anchors = {name.lower(): text for name, text in sections.items()}
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            url = rule["annotations"]["runbook_url"]
            page, _, anchor = url.partition("#")
            assert page.endswith("/docs/runbook.md") and anchor == rule["alert"].lower(), url
            assert "Look at" in anchors[anchor] and "Do:" in anchors[anchor], anchor


def test_the_hive_down_alert_watches_the_targets_not_the_hive_s_own_series() -> None:
    rules = {
        r["alert"]: r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]
    }
    assert rules["HiveDown"]["expr"].startswith("absent(up{")
    assert "absent(hive_rounds_total)" in rules["HiveQueenNotRounding"]["expr"]


@needs_promtool
def test_every_dashboard_expression_parses(tmp_path: Path) -> None:
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"hive:dashboard_panel:{i}", "expr": expr}
                    for i, expr in enumerate(dashboard_exprs())
                ],
            }
        ]
    }
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump(rules))
    done = promtool("check", "rules", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_dashboard_expression_names_only_metrics_a_scrape_carries() -> None:
    exported = scraped_names()
    for expr in dashboard_exprs():
        named = metric_names(expr)
        assert named, expr
        assert named <= exported, (expr, named - exported)


def test_the_dashboard_covers_what_an_operator_watches() -> None:
    text = " ".join(dashboard_exprs())
    for metric in (
        "hive_orders_queued",
        "hive_claim_seconds_bucket",
        "hive_bees_running",
        "hive_bee_seconds_count",
        "hive_reaped_total",
        "hive_drain_held",
        "hive_reviews_total",
        "hive_merges_total",
        "hive_spend_usd_total",
        "hive_github_requests_total",
        "hive_github_rate_limit_remaining",
        "hive_github_retries_total",
        "hive_board_streams",
    ):
        assert metric in text, metric


def test_the_store_s_gauges_are_maxed_and_the_process_gauges_summed() -> None:
    """Every pod reads the queue from the store: a sum would count it once per pod."""
    for expr in dashboard_exprs():
        expr = re.sub(r"\{[^}]*\}", "", expr)  # the dashboard's variables
        for gauge in ("hive_orders_queued", "hive_orders_in_flight", "hive_oldest_queued_seconds"):
            if gauge in expr:
                assert f"max({gauge})" in expr, expr
        for gauge in ("hive_bees_running", "hive_drain_held", "hive_board_streams"):
            if re.search(rf"\b{gauge}\b", expr):  # not hive_board_streams_refused_total
                assert re.search(rf"sum( by \([a-z_, ]+\))? \({gauge}\)|sum\({gauge}\)", expr), expr
        if "hive_github_rate_limit_remaining" in expr:  # one token's limit, seen by every pod
            assert "min(hive_github_rate_limit_remaining)" in expr, expr


VARIABLES = ("cluster", "namespace", "job")


def test_the_dashboard_serves_more_than_one_hive() -> None:
    """`cluster`, `namespace` and `job` variables (All by default, so one hive without
    the labels still shows), and every series of every panel filtered by all three."""
    templating = json.loads(DASHBOARD.read_text())["templating"]["list"]
    found = {v["name"]: v for v in templating}
    for name in VARIABLES:
        variable = found[name]
        assert variable["type"] == "query" and variable["includeAll"], name
        assert variable["allValue"] == ".*" and f", {name})" in variable["query"]["query"]
    for expr in dashboard_exprs():
        selectors = re.findall(r"\b(?:hive|process)_[a-z_]+(\{[^}]*\})?(?!\s*\()", expr)
        assert selectors, expr
        for selector in selectors:
            for name in VARIABLES:
                assert f'{name}=~"${name}"' in selector, (expr, name)


def test_the_name_reader_finds_names_and_skips_labels_and_functions() -> None:
    expr = 'histogram_quantile(0.5, sum by (le) (rate(hive_claim_seconds_bucket{job="x"}[5m])))'
    assert metric_names(expr) == {"hive_claim_seconds_bucket"}
    assert metric_names("max(a) / on (pod) group_left (x) b_total > 3") == {"a", "b_total"}
