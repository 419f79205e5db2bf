"""`hive status [--json]`: orders, runners, keys and drain state, read from the store and
this process's settings. Keys show as index, variable and fingerprint, never the value."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from hive.http.sources import store_connection
from hive.rules.drain import drain_cap_seconds
from hive.rules.keys import key_slots
from hive.settings import Settings
from hive.store import orders, runners


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("status", help="orders, runners, keys and drain state")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    with store_connection(settings) as db:
        report = status(settings, orders.listing(db), runners.listing(db), datetime.now(UTC))
    print(json.dumps(report, sort_keys=True) if args.json else table(report))
    return 0


def status(
    settings: Settings,
    order_rows: list[orders.Order],
    runner_rows: list[runners.Runner],
    now: datetime,
) -> dict[str, Any]:
    """Everything `hive status` shows, JSON-ready."""
    return {
        "orders": [_order(o, now) for o in order_rows],
        "runners": [
            {
                "name": r.name,
                "slots": r.slots,
                "running": r.running,
                "draining": r.draining,
                "seen_seconds_ago": round((now - r.seen_at).total_seconds(), 1),
            }
            for r in runner_rows
        ],
        "keys": [
            {
                "index": slot.index,
                "variable": slot.variable,
                "fingerprint": slot.fingerprint,
                "lanes": settings.worker_lanes_per_key,
            }
            for slot in key_slots(settings.worker_keys)
        ],
        "drain": {
            "draining_runners": sorted(r.name for r in runner_rows if r.draining),
            "runner_drain_seconds": settings.runner_drain_seconds,
            "platform_drain_seconds": settings.platform_drain_seconds,
            "cap_seconds": drain_cap_seconds(
                settings.runner_drain_seconds, settings.platform_drain_seconds
            ),
        },
    }


def _order(o: orders.Order, now: datetime) -> dict[str, Any]:
    if o.finished_at is not None:
        state = "ended"
    elif o.queued_at is not None and o.claimed_by is None:
        state = "queued"
    else:
        state = "running"
    since = o.finished_at or o.dispatched_at or o.queued_at or o.created_at
    return {
        "issue": o.issue,
        "state": state,
        "outcome": o.outcome,
        "review_state": o.review_state,
        "runner": o.claimed_by or ("queen" if o.queued_at is None else None),
        "attempt": o.attempt,
        "key_index": o.key_index,
        "key_fingerprint": o.key_fingerprint,
        "seconds_in_state": round((now - since).total_seconds(), 1),
        "detail": o.detail,
    }


def table(report: dict[str, Any]) -> str:
    """The report as a few aligned tables."""
    lines = ["ORDERS"]
    lines += _rows(
        report["orders"],
        [
            ("issue", "#"),
            ("state", "state"),
            ("outcome", "outcome"),
            ("runner", "runner"),
            ("attempt", "try"),
            ("key_index", "key"),
            ("seconds_in_state", "for (s)"),
        ],
        "no orders",
    )
    lines += ["", "RUNNERS"]
    lines += _rows(
        report["runners"],
        [
            ("name", "name"),
            ("slots", "slots"),
            ("running", "running"),
            ("draining", "draining"),
            ("seen_seconds_ago", "seen (s ago)"),
        ],
        "no runners",
    )
    lines += ["", "KEYS"]
    lines += _rows(
        report["keys"],
        [
            ("index", "index"),
            ("variable", "variable"),
            ("fingerprint", "fingerprint"),
            ("lanes", "lanes"),
        ],
        "no keys (set HIVE_WORKER_KEY)",
    )
    drain = report["drain"]
    draining = ", ".join(drain["draining_runners"]) or "none"
    lines += [
        "",
        "DRAIN",
        f"  draining runners: {draining}",
        f"  cap: {drain['cap_seconds']} s (runner drain {drain['runner_drain_seconds']} s, "
        f"platform drain {drain['platform_drain_seconds'] or 'unknown'})",
    ]
    return "\n".join(lines)


def _rows(rows: list[dict[str, Any]], columns: list[tuple[str, str]], empty: str) -> list[str]:
    if not rows:
        return [f"  {empty}"]
    cells = [[title for _, title in columns]]
    cells += [["-" if row[key] is None else str(row[key]) for key, _ in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in cells
    ]
