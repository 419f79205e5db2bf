"""`hive status [--json] [--watch [SECONDS]]`: orders, runners, keys and drain state, read
from the store and this process's settings (`hive.services.status`). Keys show as index,
variable and fingerprint, never the value.

With --watch the report is drawn again every SECONDS (default 2) until Ctrl-C or SIGTERM,
and then the command exits 0. On a terminal each frame replaces the last; piped, frames
follow one another (with --json, one JSON object per line). A store that stops answering
shows as one line in the frame and is tried again at the next one."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from types import FrameType
from typing import Any

import psycopg

from hive.agents import confine
from hive.errors import HiveError, UsageError
from hive.rules.text import shown
from hive.services.database import store_connection
from hive.services.status import report
from hive.settings import Settings

WATCH_DEFAULT_SECONDS = 2.0
WATCH_MIN_SECONDS = 0.5
WATCH_MAX_SECONDS = 3600.0
# home the cursor and clear the screen: a terminal shows one frame at a time
CLEAR_SCREEN = "\x1b[H\x1b[2J"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("status", help="orders, runners, keys and drain state")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--watch",
        metavar="SECONDS",
        nargs="?",
        const=str(WATCH_DEFAULT_SECONDS),
        default=None,
        help=f"redraw every SECONDS (default {WATCH_DEFAULT_SECONDS:g}) until Ctrl-C",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.watch is not None:
        return watch(watch_seconds(args.watch), args.json)
    settings = Settings.from_env()
    with store_connection(settings) as db:
        found = report(settings, db)
    found["sandbox"] = confine.said(settings)
    print(json.dumps(found, sort_keys=True) if args.json else table(found))
    return 0


def watch_seconds(text: str) -> float:
    """The --watch interval from its text; a HiveError naming what is allowed otherwise."""
    allowed = f"a number of seconds from {WATCH_MIN_SECONDS:g} to {WATCH_MAX_SECONDS:g}"
    try:
        seconds = float(text)
    except ValueError:
        raise UsageError(f"--watch {text!r} is not a number: use {allowed}") from None
    if not WATCH_MIN_SECONDS <= seconds <= WATCH_MAX_SECONDS:  # also refuses nan and inf
        raise UsageError(f"--watch {text!r} is out of range: use {allowed}")
    return seconds


def watch(seconds: float, as_json: bool) -> int:
    """Draw the report every `seconds` until SIGINT or SIGTERM; 0 then."""
    settings = Settings.from_env()
    stopping = threading.Event()
    tty = sys.stdout.isatty()
    with _stopped_by_signals(stopping), ExitStack() as held:
        db: psycopg.Connection[Any] | None = None
        while not stopping.is_set():
            now = datetime.now(UTC)
            try:
                if db is None:
                    db = held.enter_context(store_connection(settings))
                found: dict[str, Any] | str = report(settings, db, now)
            except (psycopg.Error, HiveError) as err:
                held.close()  # a broken connection is opened again at the next frame
                db = None
                found = f"store unavailable: {str(err).strip().splitlines()[0]}"
            _draw(found, now, seconds, as_json, tty)
            stopping.wait(seconds)
    return 0


def _draw(
    found: dict[str, Any] | str, now: datetime, seconds: float, as_json: bool, tty: bool
) -> None:
    if as_json:
        frame = {"at": now.isoformat(), "error": found} if isinstance(found, str) else found
        print(json.dumps(frame, sort_keys=True), flush=True)
        return
    header = f"hive status at {now:%Y-%m-%d %H:%M:%S} UTC, every {seconds:g} s (Ctrl-C to stop)"
    body = found if isinstance(found, str) else table(found)
    print(f"{CLEAR_SCREEN if tty else ''}{header}\n\n{body}\n", flush=True)


@contextmanager
def _stopped_by_signals(stopping: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stopping` while inside; the old handlers come back after."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    handler: Callable[[int, FrameType | None], None] = on_signal
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def spend_line(spent: dict[str, Any]) -> str:
    """Today's spend in one line: the total, the cap, and what is not priced."""
    cap = spent["cap_usd"]
    line = f"${spent['today_usd']:.2f} over {spent['attempts']} attempts"
    line += f" of a ${cap:.2f} cap" if cap else " (no cap: HIVE_SPEND_CAP_USD=0)"
    if spent["capped"]:
        line += ": reached, no new orders until 00:00 UTC"
    if spent["unpriced"]:
        line += f"; {spent['unpriced']} attempts with an unknown cost"
    return line


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
            ("cost_usd", "cost ($)"),
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
            ("rests_seconds", "rests (s)"),
        ],
        "no keys (set HIVE_WORKER_KEY)",
    )
    lines += ["", "SPEND (UTC day)", "  " + spend_line(report["spend"])]
    drain = report["drain"]
    draining = shown(", ".join(drain["draining_runners"])) or "none"
    lines += [
        "",
        "DRAIN",
        f"  draining runners: {draining}",
        f"  cap: {drain['cap_seconds']} s (runner drain {drain['runner_drain_seconds']} s, "
        f"platform drain {drain['platform_drain_seconds'] or 'unknown'})",
    ]
    if "sandbox" in report:
        lines += ["", "SANDBOX", f"  {report['sandbox']} (this machine, these settings)"]
    return "\n".join(lines)


def _rows(rows: list[dict[str, Any]], columns: list[tuple[str, str]], empty: str) -> list[str]:
    if not rows:
        return [f"  {empty}"]
    cells = [[title for _, title in columns]]
    # a runner name or an outcome from the store is printed escaped: it cannot steer a terminal
    cells += [
        ["-" if row[key] is None else shown(str(row[key])) for key, _ in columns] for row in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in cells
    ]
