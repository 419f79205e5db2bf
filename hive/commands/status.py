"""`hive status [--json]`: orders, runners, keys and drain state, read from the store and
this process's settings (`hive.services.status`). Keys show as index, variable and
fingerprint, never the value."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hive.commands import store_connection
from hive.services.status import report
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("status", help="orders, runners, keys and drain state")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    with store_connection(settings) as db:
        shown = report(settings, db)
    print(json.dumps(shown, sort_keys=True) if args.json else table(shown))
    return 0


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
