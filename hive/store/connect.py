"""Which database this process uses: `HIVE_DATABASE_URL`, or the embedded server,
started on first use (DESIGN 2, embedded default)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import psycopg

from hive.errors import StoreUnreachable
from hive.rules.startup import store_wait_pause
from hive.settings import Settings
from hive.store import embedded

log = logging.getLogger("hive.store")


def database_url(settings: Settings) -> str:
    """The URL to connect to. Starts the embedded server when no URL is set."""
    if settings.database_url:
        return settings.database_url
    return embedded.start(settings.pgdata)


def listen_url(settings: Settings, url: str) -> str:
    """Where this process LISTENs. That is `HIVE_LISTEN_URL`, else `url`, the work
    connections' URL."""
    return settings.listen_url or url


def pooled(settings: Settings, url: str) -> bool:
    """Whether `url` is a pooler's in transaction mode (PgBouncer). LISTEN then goes
    elsewhere, to the other URL `HIVE_LISTEN_URL` names. The work connections keep no
    session state, protocol-level prepared statements included."""
    return listen_url(settings, url) != url


def named(url: str, application_name: str) -> str:
    """`url` as a conninfo whose connections show as `application_name` in
    pg_stat_activity. Each process names its own, so a runner's connections can be
    counted."""
    return psycopg.conninfo.make_conninfo(url, application_name=application_name[:63])


def where(url: str) -> str:
    """host:port of a URL or conninfo, for error lines; never the password."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        parts = urlsplit(url)
        return f"{parts.hostname or 'localhost'}:{parts.port or 5432}"
    return f"{info.get('host') or 'localhost'}:{info.get('port') or 5432}"


def check_reachable(url: str, timeout_seconds: float = 5.0) -> None:
    """Raise StoreUnreachable (one line, host and port, no password) if `url` cannot be
    reached."""
    try:
        with psycopg.connect(url, connect_timeout=max(1, int(timeout_seconds))):
            pass
    except psycopg.OperationalError as err:
        reason = str(err).strip().splitlines()[-1].strip() if str(err).strip() else "no answer"
        raise StoreUnreachable(f"database at {where(url)} is unreachable: {reason}") from None


def wait_reachable(
    url: str,
    wait_seconds: float,
    *,
    sleep: Callable[[float], object] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Return once `url` can be reached. It tries again for up to `wait_seconds`, pausing
    as rules.startup says, with a warning line each time. Then it raises the last
    StoreUnreachable."""
    deadline = clock() + wait_seconds
    failed = 0
    while True:
        try:
            check_reachable(url)
            if failed:
                log.info("the database at %s answers after %d failed attempts", where(url), failed)
            return
        except StoreUnreachable as err:
            failed += 1
            pause = store_wait_pause(failed, deadline - clock())
            if pause is None:
                raise
            log.warning("%s; trying again in %.1f s", err, pause)
            sleep(pause)
