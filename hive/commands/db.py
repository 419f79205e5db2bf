"""`hive db start|stop|status|url`: the embedded PostgreSQL."""

from __future__ import annotations

import argparse
import sys

from hive.services.database import embedded
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("db", help="the embedded PostgreSQL (data in HIVE_PGDATA)")
    parser.add_argument("action", choices=("start", "stop", "status", "url"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    if args.action == "start":
        print(embedded.start(settings.pgdata))
        return 0
    if args.action == "stop":
        stopped = embedded.stop(settings.pgdata)
        print("stopped" if stopped else "not running")
        return 0
    current = embedded.status(settings.pgdata)
    if args.action == "url":
        if not current.running:
            print(f"hive: no embedded PostgreSQL runs in {current.pgdata}", file=sys.stderr)
            return 1
        print(current.url)
        return 0
    state = f"running (pid {current.pid}) at {current.url}" if current.running else "stopped"
    print(f"{current.pgdata}: {state}")
    return 0 if current.running else 3
