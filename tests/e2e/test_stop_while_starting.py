"""A `hive serve` told to stop (SIGTERM) while it starts holds no work: it exits 0, as
after a clean drain, instead of dying of the signal (143), which an orchestrator counts
as a failed stop. Found by the chaos run (a replacement runner SIGTERMed as it started).
"""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import pytest

from hive.swarm import start_serve

pytestmark = [pytest.mark.e2e, pytest.mark.live]

ACCEPT_SECONDS = 60.0
EXIT_SECONDS = 10.0


def test_a_serve_sigtermed_in_its_first_clone_exits_zero(tmp_path: Path, hive_db_url: str):
    # a git server that takes the connection and never answers: the start waits in its
    # clone (past the settings, the database and the migrations) until it is stopped
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(ACCEPT_SECONDS)
        port = server.getsockname()[1]
        env = {
            "HIVE_DATABASE_URL": hive_db_url,
            "HIVE_REPO_URL": f"git://127.0.0.1:{port}/repo",
            "HIVE_WORKDIR": str(tmp_path / "work"),
            "HIVE_ROLE": "runner",
            "HIVE_HTTP_ADDR": "127.0.0.1:0",
        }
        serve = start_serve("starting", env, cwd=tmp_path, log_dir=tmp_path / "logs")
        try:
            conn, _ = server.accept()  # the event: it is cloning
            with conn:
                serve.send(signal.SIGTERM)
                assert serve.wait(EXIT_SECONDS) == 0, serve.log()
        finally:
            serve.kill()
