"""`hive status --watch` as a user runs it: a real process, redrawing until a real SIGINT
or SIGTERM, then exiting 0."""

from __future__ import annotations

import json
import os
import pty
import selectors
import signal
import socket
import subprocess
import sys
import time

import pytest

from hive.store import orders

from .conftest import World

pytestmark = pytest.mark.live

# how long a frame may take to appear (a cold interpreter, a loaded machine)
FRAME_WAIT_SECONDS = 60.0


def start_watch(world: World, *args: str, **env: str) -> subprocess.Popen[bytes]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    clean.update(
        {
            "HIVE_DATABASE_URL": world.db_url,
            "HIVE_WORKDIR": str(world.workdir),
            "HIVE_BASE_REF": "main",
            **env,
        }
    )
    return subprocess.Popen(
        [sys.executable, "-m", "hive", "status", *args],
        env=clean,
        cwd=world.workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def read_until(proc: subprocess.Popen[bytes], needle: str, count: int = 1) -> str:
    """Read the process's stdout until `needle` has appeared `count` times; the text read."""
    assert proc.stdout is not None
    seen = b""
    deadline = time.monotonic() + FRAME_WAIT_SECONDS
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while seen.decode(errors="replace").count(needle) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"{needle!r} x{count} never came; got {seen.decode()!r}"
            if sel.select(left):
                chunk = os.read(proc.stdout.fileno(), 65536)
                assert chunk, f"stdout closed early: {seen.decode()!r} {proc.stderr.read()!r}"
                seen += chunk
    return seen.decode()


def ended(proc: subprocess.Popen[bytes]) -> int:
    try:
        return proc.wait(timeout=FRAME_WAIT_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_status_watch_redraws_until_a_signal_then_exits_0(world: World, sig: int) -> None:
    proc = start_watch(world, "--watch", "0.5")
    first = read_until(proc, "hive status at", count=2)  # it redraws
    assert "no orders" in first and "every 0.5 s" in first
    # an order written while it watches appears in a later frame
    new = orders.NewOrder(issue=7, branch="queen-7", base="main", brief="do it")
    assert orders.insert(world.db, new, queued=True) is orders.Insertion.WRITTEN
    later = read_until(proc, "queued")
    assert "7" in later
    proc.send_signal(sig)
    assert ended(proc) == 0
    assert proc.stderr is not None and proc.stderr.read() == b""


def test_status_watch_json_prints_one_object_per_frame(world: World) -> None:
    proc = start_watch(world, "--watch", "0.5", "--json")
    text = read_until(proc, "\n", count=2)
    frames = [json.loads(line) for line in text.splitlines()[:2]]
    assert all(set(f) >= {"orders", "runners", "keys", "drain"} for f in frames)
    proc.send_signal(signal.SIGTERM)
    assert ended(proc) == 0


def test_status_watch_keeps_going_while_the_store_is_away(world: World) -> None:
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    away = f"postgresql://hive@127.0.0.1:{port}/hive"
    proc = start_watch(world, "--watch", "0.5", HIVE_DATABASE_URL=away)
    text = read_until(proc, "store unavailable", count=2)
    assert f"127.0.0.1:{port}" in text
    proc.send_signal(signal.SIGTERM)
    assert ended(proc) == 0


@pytest.mark.parametrize("bad", ["abc", "0", "-1", "nan", "inf", "3601"])
def test_status_watch_refuses_a_bad_interval_in_one_line(world: World, bad: str) -> None:
    proc = start_watch(world, f"--watch={bad}")
    assert ended(proc) == 2
    assert proc.stderr is not None
    lines = proc.stderr.read().decode().strip().splitlines()
    assert lines == [f"hive: --watch {bad!r} is " + lines[0].split(" is ", 1)[1]]
    assert "0.5 to 3600" in lines[0]


def test_status_watch_on_a_terminal_draws_each_frame_over_the_last(world: World) -> None:

    main, child = pty.openpty()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    clean.update({"HIVE_DATABASE_URL": world.db_url, "HIVE_WORKDIR": str(world.workdir)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "hive", "status", "--watch", "0.5"],
        env=clean,
        cwd=world.workdir,
        stdout=child,
        stderr=subprocess.PIPE,
    )
    os.close(child)
    seen = b""
    deadline = time.monotonic() + FRAME_WAIT_SECONDS
    while seen.count(b"hive status at") < 2:
        assert time.monotonic() < deadline, seen
        seen += os.read(main, 65536)
    assert seen.count(b"\x1b[H\x1b[2Jhive status at") >= 2
    # the terminal stays open until the process is gone: a frame drawn on a closed one
    # would fail, and that is not what is asked here
    proc.send_signal(signal.SIGTERM)
    code = ended(proc)
    os.close(main)
    assert proc.stderr is not None
    assert code == 0, proc.stderr.read()
