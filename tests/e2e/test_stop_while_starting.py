"""A `hive serve` told to stop (SIGTERM) while it starts holds no work: it exits 0, as
after a clean drain, instead of dying of the signal (143), which an orchestrator counts
as a failed stop. Found by the chaos run (a replacement runner SIGTERMed as it started).
"""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import pytest

from hive.swarm import start_serve, wait_for

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


def _nowhere() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"postgresql://hive:hunter2@127.0.0.1:{probe.getsockname()[1]}/hive"


def _serve_env(tmp_path: Path, db_url: str, **extra: str) -> dict[str, str]:
    return {
        "HIVE_DATABASE_URL": db_url,
        "HIVE_REPO_URL": str(tmp_path / "repo"),
        "HIVE_WORKDIR": str(tmp_path / "work"),
        "HIVE_ROLE": "runner",
        "HIVE_HTTP_ADDR": "127.0.0.1:0",
        **extra,
    }


def test_a_serve_sigtermed_while_it_waits_for_its_store_exits_zero(tmp_path: Path):
    env = _serve_env(tmp_path, _nowhere(), HIVE_STORE_WAIT_SECONDS="600")
    serve = start_serve("waiting", env, cwd=tmp_path, log_dir=tmp_path / "logs")
    try:
        wait_for(lambda: "trying again in" in serve.log(), ACCEPT_SECONDS, "the wait's line")
        serve.send(signal.SIGTERM)
        assert serve.wait(EXIT_SECONDS) == 0, serve.log()
        assert "hunter2" not in serve.log()
    finally:
        serve.kill()


def test_a_serve_whose_store_stays_away_exits_2_after_the_wait(tmp_path: Path):
    env = _serve_env(tmp_path, _nowhere(), HIVE_STORE_WAIT_SECONDS="1")
    serve = start_serve("away", env, cwd=tmp_path, log_dir=tmp_path / "logs")
    try:
        assert serve.wait(ACCEPT_SECONDS) == 2, serve.log()
        lines = serve.log().strip().splitlines()
        assert "trying again in 0.5 s" in lines[0]
        assert lines[-1].startswith("hive: database at 127.0.0.1:"), lines
        assert "unreachable" in lines[-1] and "hunter2" not in serve.log()
    finally:
        serve.kill()
