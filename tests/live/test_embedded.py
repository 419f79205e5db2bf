import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from hive.store import embedded


@pytest.fixture
def pgdata():
    # not under pytest's own temporary root: the server runs as another user, which must
    # traverse every ancestor, and each pytest session that starts resets that root to
    # 0700 (another session starting meanwhile made initdb fail with "Permission denied")
    base = Path(tempfile.mkdtemp(prefix="hive-embedded-", dir="/tmp"))
    path = base / "pg"
    yield path
    embedded.stop(path)
    shutil.rmtree(base, ignore_errors=True)


def test_start_is_idempotent_and_stop_is_clean(pgdata):
    url = embedded.start(pgdata)
    assert embedded.start(pgdata) == url
    with psycopg.connect(url) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
    assert embedded.status(pgdata).running
    assert embedded.stop(pgdata) is True
    assert not embedded.status(pgdata).running
    assert embedded.stop(pgdata) is False


def test_a_stale_pid_file_is_handled(pgdata):
    embedded.start(pgdata)
    pid_file = pgdata / "postmaster.pid"
    lines = pid_file.read_text().splitlines()
    embedded.stop(pgdata)
    # a pid file left by a crash, naming a process that is gone
    lines[0] = "999999"
    pid_file.write_text("\n".join(lines) + "\n")
    assert not embedded.status(pgdata).running
    url = embedded.start(pgdata)
    with psycopg.connect(url) as conn:
        assert conn.execute("select 2").fetchone() == (2,)


def test_hive_db_commands(pgdata):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_PGDATA"] = str(pgdata)

    def hive(*args):
        return subprocess.run(
            [sys.executable, "-m", "hive", "db", *args], env=env, capture_output=True, text=True
        )

    assert hive("url").returncode == 1
    started = hive("start")
    assert started.returncode == 0, started.stderr
    assert hive("url").stdout.strip() == started.stdout.strip()
    assert "running" in hive("status").stdout
    assert hive("stop").stdout.strip() == "stopped"
    assert hive("status").returncode == 3


@pytest.mark.skipif(os.geteuid() != 0, reason="the /root guard applies to root only")
def test_a_data_directory_under_root_is_refused():
    from hive.errors import HiveError

    with pytest.raises(HiveError, match="under /root"):
        embedded.start(embedded.Path("/root/hive-test-pg"))
