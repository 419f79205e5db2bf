"""`hive migrate`: apply the pending migrations to the configured database and print
the versions applied (nothing when the schema is current)."""

from __future__ import annotations

import argparse

from hive.services import database
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("migrate", help="create or upgrade the hive schema (forward only)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    url = database.database_url(Settings.from_env())
    database.check_reachable(url)
    applied = database.apply_migrations(url)
    if applied:
        print("applied " + ", ".join(f"{v:04d}" for v in applied))
    else:
        print(f"schema is current (version {database.schema_version(url):04d})")
    return 0
