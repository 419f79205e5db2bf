"""A throwaway Synapse for the chat's tests and `hive bench chat`: its own process on
127.0.0.1, SQLite in a temporary directory, no federation, its rate limits lifted (the
hive's own clocks are what is measured), and a registration shared secret to make users
through the admin API (`register`). Synapse comes with the `test` extra.

`Homeserver.start()` waits until the server answers `/versions`; `stop()` sends SIGTERM
and waits for the exit (SIGKILL after STOP_SECONDS); `restart()` is a stop and a start on
the same data and port.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER_NAME = "hive.test"
START_SECONDS = 90.0  # a cold Synapse on a shared two-core machine takes 5 to 20 s
STOP_SECONDS = 15.0
POLL_SECONDS = 0.1
# rate limits high enough never to be met: the hive's own clocks are under test
_UNLIMITED = {"per_second": 10000, "burst_count": 10000}

CONFIG = """\
server_name: "{server_name}"
pid_file: "{dir}/homeserver.pid"
listeners:
  - port: {port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: "{dir}/homeserver.db"
log_config: "{dir}/log.yaml"
media_store_path: "{dir}/media"
signing_key_path: "{dir}/signing.key"
registration_shared_secret: "{secret}"
macaroon_secret_key: "{macaroon}"
form_secret: "{form}"
report_stats: false
enable_metrics: false
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
presence:
  enabled: false
rc_message: {limits}
rc_registration: {limits}
rc_login:
  address: {limits}
  account: {limits}
  failed_attempts: {limits}
rc_joins:
  local: {limits}
  remote: {limits}
rc_invites:
  per_room: {limits}
  per_user: {limits}
  per_sender: {limits}
rc_room_creation: {limits}
rc_admin_redaction: {limits}
"""

LOG_CONFIG = """\
version: 1
formatters:
  precise:
    format: "%(asctime)s %(name)s %(levelname)s %(message)s"
handlers:
  file:
    class: logging.FileHandler
    filename: "{dir}/homeserver.log"
    formatter: precise
root:
  level: WARNING
  handlers: [file]
disable_existing_loggers: false
"""


class HomeserverError(RuntimeError):
    """Synapse did not start, stop or answer as asked; the text says what it did."""


@dataclass
class User:
    user_id: str
    access_token: str
    password: str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Homeserver:
    """A Synapse under `directory` on 127.0.0.1:`port`."""

    directory: Path
    port: int = field(default_factory=free_port)
    secret: str = field(default_factory=lambda: secrets.token_hex(16))
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def server_name(self) -> str:
        return SERVER_NAME

    def start(self) -> Homeserver:
        config = self.directory / "homeserver.yaml"
        if not config.exists():
            self._configure(config)
        log = (self.directory / "stdout.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "synapse.app.homeserver", "-c", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.directory,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HomeserverError(f"Synapse exited {self.process.returncode}: {self._tail()}")
            try:
                self.get("/_matrix/client/versions")
                return self
            except OSError:
                time.sleep(POLL_SECONDS)
        self.stop()
        raise HomeserverError(f"Synapse did not answer in {START_SECONDS:g}s: {self._tail()}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(STOP_SECONDS)

    def restart(self) -> None:
        self.stop()
        self.start()

    def register(self, name: str, displayname: str = "", admin: bool = False) -> User:
        """A new user `name` (its password random) through the shared-secret admin API."""
        nonce = self.get("/_synapse/admin/v1/register")["nonce"]
        password = secrets.token_hex(12)
        mac = hmac.new(self.secret.encode(), digestmod=hashlib.sha1)
        for part in (nonce, name, password, "admin" if admin else "notadmin"):
            mac.update(part.encode() + (b"" if part in ("admin", "notadmin") else b"\x00"))
        body = {
            "nonce": nonce,
            "username": name,
            "password": password,
            "admin": admin,
            "mac": mac.hexdigest(),
        }
        if displayname:
            body["displayname"] = displayname
        got = self.post("/_synapse/admin/v1/register", body)
        return User(got["user_id"], got["access_token"], password)

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as answer:
            return json.loads(answer.read())

    def post(self, path: str, body: Any, token: str = "") -> Any:
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), method="POST"
        )
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def _configure(self, config: Path) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "media").mkdir(exist_ok=True)
        values = {
            "server_name": SERVER_NAME,
            "dir": str(self.directory),
            "port": self.port,
            "secret": self.secret,
            "macaroon": secrets.token_hex(16),
            "form": secrets.token_hex(16),
            "limits": json.dumps(_UNLIMITED),
        }
        config.write_text(CONFIG.format(**values))
        (self.directory / "log.yaml").write_text(LOG_CONFIG.format(**values))
        generated = subprocess.run(
            [sys.executable, "-m", "synapse.app.homeserver", "-c", str(config), "--generate-keys"],
            cwd=self.directory,
            capture_output=True,
            text=True,
            check=False,
        )
        if generated.returncode != 0:
            raise HomeserverError(f"Synapse could not make its keys: {generated.stderr[-2000:]}")

    def _tail(self) -> str:
        text = ""
        for name in ("stdout.log", "homeserver.log"):
            path = self.directory / name
            if path.exists():
                text += path.read_text(errors="replace")[-1500:]
        return text
