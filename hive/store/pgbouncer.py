"""PgBouncer in transaction mode in front of a PostgreSQL server, for the tests and the
benchmarks (DESIGN 11, scale). It is Debian's `pgbouncer` (1.18). It starts like the
embedded server, on a Unix socket in a directory of its own, and stops with SIGTERM.

Every database of the server passes through it (`* =`), as the server's user that the
URL names. A client's user and password are not checked (`auth_type = any`). The socket
is the caller's own, in a directory only it writes. A client may send
`application_name`; pg_stat_activity then shows that of the server connection's last
client.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from hive.errors import HiveError

BINARY = "/usr/sbin/pgbouncer"
PORT = 6432
START_SECONDS = 10.0
STOP_SECONDS = 10.0
POLL_SECONDS = 0.05
# PgBouncer's admin console (its own command, not PostgreSQL's SQL)
ADMIN_STATS = "SHOW STATS"
# as root PgBouncer refuses to run; it runs as the embedded server's user, else nobody
RUN_AS = ("embedded_postgres", "nobody")


@dataclass
class Bouncer:
    """A running PgBouncer. `url(dbname)` is a database of the server, reached through it."""

    directory: Path
    process: subprocess.Popen[bytes]
    server: str  # the server's URL (the direct one)

    def url(self, server_url: str | None = None) -> str:
        """`server_url` as reached through PgBouncer. The default is the server's URL; any
        other database of that server may be named."""
        info = psycopg.conninfo.conninfo_to_dict(server_url or self.server)
        return psycopg.conninfo.make_conninfo(
            "",
            host=str(self.directory),
            port=str(PORT),
            dbname=info.get("dbname") or "postgres",
            user=info.get("user"),
            application_name=info.get("application_name"),
        )

    def transactions(self, server_url: str) -> int:
        """Transactions PgBouncer passed to the database of `server_url` so far (its
        admin console's SHOW STATS)."""
        dbname = psycopg.conninfo.conninfo_to_dict(server_url).get("dbname")
        admin = psycopg.conninfo.make_conninfo(self.url(), dbname="pgbouncer")
        with psycopg.connect(admin, autocommit=True, prepare_threshold=None) as conn:
            cur = conn.execute(ADMIN_STATS)
            names = [c.name for c in cur.description or ()]
            for row in cur.fetchall():
                stats = dict(zip(names, row, strict=True))
                if stats.get("database") == dbname:
                    return int(stats["total_xact_count"])
        return 0

    def stop(self) -> None:
        """Stop it with SIGTERM, then SIGKILL after STOP_SECONDS. The directory is removed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_SECONDS)
        shutil.rmtree(self.directory, ignore_errors=True)


def available() -> bool:
    return os.access(BINARY, os.X_OK)


def start(
    server_url: str,
    directory: Path,
    *,
    pool_size: int = 20,
    max_clients: int = 2000,
    strict: bool = False,
) -> Bouncer:
    """Start PgBouncer in transaction mode in front of the server of `server_url`.

    It runs in `directory`, made here and emptied first. As root, the directory's parent
    must let PgBouncer's user through. It keeps at most `pool_size` server connections a
    database and user, and `max_clients` clients. With `strict` it hands each
    transaction the next server connection in turn; the tests use that. Raises
    HiveError, with the end of its log, when it is not installed or does not answer
    within START_SECONDS."""
    if not available():
        raise HiveError(f"{BINARY} is not installed: apt-get install pgbouncer (make system)")
    info = psycopg.conninfo.conninfo_to_dict(server_url)
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    server = " ".join(
        f"{key}={info[key]}" for key in ("host", "port", "user", "password") if info.get(key)
    )
    config = directory / "pgbouncer.ini"
    log = directory / "pgbouncer.log"
    config.write_text(
        "[databases]\n"
        f"* = {server}\n"
        "[pgbouncer]\n"
        "listen_addr =\n"
        f"listen_port = {PORT}\n"
        f"unix_socket_dir = {directory}\n"
        "auth_type = any\n"
        "pool_mode = transaction\n"
        f"default_pool_size = {int(pool_size)}\n"
        f"max_client_conn = {int(max_clients)}\n"
        f"max_db_connections = {int(pool_size)}\n"
        "server_check_delay = 0\n"
        # each transaction on the next of at least three server connections: session
        # state that leaks from one to the next (a prepared statement, a SET) fails at once
        f"server_round_robin = {1 if strict else 0}\n"
        f"min_pool_size = {min(3, int(pool_size)) if strict else 0}\n"
        f"admin_users = {info.get('user') or 'postgres'}\n"
        "ignore_startup_parameters = extra_float_digits,options\n"
        f"logfile = {log}\n"
        "log_connections = 0\n"
        "log_disconnections = 0\n"
    )
    command = [BINARY, "--quiet"]
    if os.geteuid() == 0:
        user = _unprivileged()
        command += ["-u", user]
        owner = pwd.getpwnam(user)
        os.chown(directory, owner.pw_uid, owner.pw_gid)
        os.chown(config, owner.pw_uid, owner.pw_gid)
    with (directory / "stderr.log").open("wb") as stderr:
        process = subprocess.Popen(
            [*command, str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    bouncer = Bouncer(directory, process, server_url)
    _await(bouncer, log)
    return bouncer


def _unprivileged() -> str:
    for name in RUN_AS:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise HiveError(f"PgBouncer will not run as root, and none of {RUN_AS} exists")


def _await(bouncer: Bouncer, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            with psycopg.connect(bouncer.url(), connect_timeout=2, prepare_threshold=None):
                return
        except psycopg.OperationalError as err:
            failed = str(err).strip()
        if bouncer.process.poll() is not None or time.monotonic() > deadline:
            tail = "".join(
                path.read_text(errors="replace")[-800:]
                for path in (log, log.with_name("stderr.log"))
                if path.exists()
            )
            bouncer.stop()
            raise HiveError(f"PgBouncer did not answer ({failed}); its log ends: {tail}")
        time.sleep(POLL_SECONDS)
