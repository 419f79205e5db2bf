"""`hive migrate`: apply the pending migrations to the configured database and print
the versions applied (nothing when the schema is current)."""

from __future__ import annotations

import argparse

from hive.settings import Settings
from hive.store import connect, migrate


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("migrate", help="create or upgrade the hive schema (forward only)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    url = connect.database_url(Settings.from_env())
    connect.check_reachable(url)
    applied = migrate.apply(url)
    if applied:
        print("applied " + ", ".join(f"{v:04d}" for v in applied))
    else:
        print(f"schema is current (version {migrate.check(url):04d})")
    return 0
