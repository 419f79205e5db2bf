"""hive.orphans: a killed owner's servers are stopped by its guard; a clean owner's guard
runs nothing. Real processes, real SIGKILLs, a real embedded PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from hive import orphans

WAIT_SECONDS = 60.0
POLL_SECONDS = 0.05


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"not within {WAIT_SECONDS} s: {what}"
        time.sleep(POLL_SECONDS)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _owner(tmp_path: Path, body: str) -> tuple[subprocess.Popen[bytes], dict[str, int]]:
    """A Python process that runs `body`, writes its facts to facts.json and then waits
    for the test: the test SIGKILLs it, or it ends by itself when `body` returns."""
    facts = tmp_path / "facts.json"
    script = textwrap.dedent(body) + textwrap.dedent(
        f"""
        import json, pathlib
        pathlib.Path({str(facts)!r} + ".part").write_text(json.dumps(facts))
        pathlib.Path({str(facts)!r} + ".part").rename({str(facts)!r})
        if wait:
            import time
            time.sleep(3600)
        """
    )
    owner = subprocess.Popen([sys.executable, "-c", script])
    _wait(facts.exists, "the owner's facts")
    return owner, json.loads(facts.read_text())


def test_a_killed_owners_guard_runs_its_stop(tmp_path: Path) -> None:
    done = tmp_path / "stopped"
    owner, facts = _owner(
        tmp_path,
        f"""
        from hive import orphans
        watcher = orphans.guard(["touch", {str(done)!r}])
        facts = {{"watcher": watcher.process.pid}}
        wait = True
        """,
    )
    assert not done.exists()
    owner.kill()
    owner.wait()
    _wait(done.exists, "the guard's stop after its owner's SIGKILL")
    _wait(lambda: not _alive(facts["watcher"]), "the watcher's exit")


def test_a_released_guard_runs_nothing(tmp_path: Path) -> None:
    done = tmp_path / "stopped"
    owner, facts = _owner(
        tmp_path,
        f"""
        from hive import orphans
        watcher = orphans.guard(["touch", {str(done)!r}])
        facts = {{"watcher": watcher.process.pid}}
        watcher.release()
        wait = False
        """,
    )
    assert owner.wait(WAIT_SECONDS) == 0
    _wait(lambda: not _alive(facts["watcher"]), "the released watcher's exit")
    assert not done.exists()


def test_a_group_guard_ends_the_group_and_removes_its_directory(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    server = subprocess.Popen(["sleep", "3600"], start_new_session=True)
    try:
        owner, _ = _owner(
            tmp_path,
            f"""
            from hive import orphans
            orphans.guard_group({server.pid}, {str(scratch)!r})
            facts = {{}}
            wait = True
            """,
        )
        owner.kill()
        owner.wait()
        assert server.wait(WAIT_SECONDS) == -signal.SIGTERM
        _wait(lambda: not scratch.exists(), "the group's directory removed")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_a_killed_test_session_stops_its_embedded_postgresql(tmp_path: Path) -> None:
    """A pytest session killed mid-test (a CI timeout) leaves no server behind: the
    hive_pg_url fixture's guard stops it and removes its directory."""
    facts = tmp_path / "server.json"
    (tmp_path / "test_killed.py").write_text(
        textwrap.dedent(
            f"""
            import json, os, signal
            from pathlib import Path

            def test_killed(hive_pg_url):
                pgdata = Path(hive_pg_url.split("host=")[-1].split("&")[0])
                pid = int((pgdata / "postmaster.pid").read_text().split()[0])
                Path({str(facts)!r}).write_text(json.dumps({{"pid": pid, "pgdata": str(pgdata)}}))
                os.kill(os.getpid(), signal.SIGKILL)
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIVE_", "PYTEST_"))}
    session = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cov", "-p", "no:xdist", "-x"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=WAIT_SECONDS * 3,
        check=False,
    )
    assert session.returncode == -signal.SIGKILL, session.stdout.decode()[-2000:]
    server = json.loads(facts.read_text())
    _wait(lambda: not _alive(server["pid"]), "the killed session's postmaster stopped")
    _wait(lambda: not Path(server["pgdata"]).exists(), "the server's directory removed")


def test_a_bad_call_is_refused_with_its_usage() -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "hive.orphans", "not-a-pid", "true"],
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert bad.returncode == 2
    assert "usage: python -m hive.orphans PARENT_PID -- ARGV" in bad.stderr
    assert orphans.main(["12", "true"]) == 2
