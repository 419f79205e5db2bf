"""`hive serve`: run the supervisor tree for HIVE_ROLE until SIGTERM, then drain by the
card and exit 0 (DESIGN 8).

Before anything starts: the settings (every bad variable at once), logging, the HTTP
config (a non-loopback bind without a token is refused in one line), HIVE_REPO_URL (every
role judges or runs work on the repository), the database (the embedded server when
HIVE_DATABASE_URL is unset; waited for up to HIVE_STORE_WAIT_SECONDS, rules.startup) and
its migrations (safe when several processes start at
once: an advisory lock serialises them), then the clone, then the turns an earlier
process on this workdir left running are killed (hive.agents.stopping.hold_turn_groups).
"""

from __future__ import annotations

import argparse
import logging

from hive import logs, tree
from hive.agents import confine
from hive.agents.stopping import hold_turn_groups
from hive.errors import UsageError
from hive.forge.github.wiring import git_auth
from hive.git.repo import open_checkout
from hive.http import HttpConfig, check_config
from hive.services import database
from hive.settings import Settings
from hive.stopping_early import stop_before_start

log = logging.getLogger("hive.serve")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "serve", help="run the Queen and/or runner for HIVE_ROLE; exit 0 after a clean drain"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    stop_before_start()  # the console script's way in: `python -m hive` did it already
    settings = Settings.from_env()
    logs.setup(settings.log_format, settings.log_level)
    check_config(HttpConfig.from_settings(settings))
    if not settings.repo_url:
        raise UsageError(
            "HIVE_REPO_URL is not set: name the repository (a path or URL) whose issues "
            "this hive works on"
        )
    url = database.database_url(settings)
    database.wait_reachable(url, settings.store_wait_seconds)
    applied = database.apply_migrations(url)
    if applied:
        log.info("migrated the schema to %04d", applied[-1])
    checkout = open_checkout(
        settings.repo_url,
        settings.workdir,
        settings.base_ref,
        settings.clone_depth,
        auth=git_auth(settings),
    )
    hold_turn_groups(settings.workdir)
    sandbox = confine.start(settings)
    hive = tree.build(settings, url, checkout)
    hive.runtime.metrics.sandbox_info.labels(kind=sandbox.kind.value).set(1)
    log.info(
        "serving as %s (%s) on %s",
        ",".join(sorted(settings.roles)),
        settings.runner_name,
        settings.http_addr,
    )
    hive.run_main()
