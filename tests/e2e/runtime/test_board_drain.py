"""SIGTERM to a real `hive serve` with browsers watching the board: the open event
streams hold nothing up."""

from __future__ import annotations

import re
import signal

import pytest

from hive.swarm import wait_for
from tests.live.board.sse import Stream, basic

from .harness import World
from .test_drain import EXIT_SECONDS, START_SECONDS

pytestmark = [pytest.mark.e2e, pytest.mark.live]

TOKEN = "e2e-board-token-0123"
STREAMS = 20


def test_sigterm_with_board_streams_open_exits_zero_having_waited_for_nothing(
    world: World,
) -> None:
    # how fast beside a process with no stream is `hive bench board`'s to measure
    # (sigterm_ratio): a wall clock read here measures the machine's load as well
    world.add_issue(1)
    serve = world.start("watched", "runner", HIVE_API_TOKEN=TOKEN)
    found = wait_for(
        lambda: re.search(r"serving on http://127\.0\.0\.1:(\d+)", serve.log()),
        START_SECONDS,
        "the HTTP server starts",
    )
    port = int(found[1])
    world.wait(lambda: world.runner_row("watched"), START_SECONDS, "the runner registers")
    streams = [Stream(port, "/board/events", basic(TOKEN)) for _ in range(STREAMS - 1)]
    streams.append(Stream(port, "/board/events?issue=1", basic(TOKEN)))
    try:
        for stream in streams[:-1]:
            assert stream.next().name == "snapshot"
        serve.send(signal.SIGTERM)
        assert world.exit_code(serve, EXIT_SECONDS) == 0, world.report()
        assert all(stream.ended() for stream in streams)
        summary = next(line for line in serve.log().splitlines() if "drain: cap" in line)
        assert "held at start 0, ended on their own 0, handed back 0, stopped 0" in summary
        assert "left behind" not in serve.log() and "Traceback" not in serve.log()
    finally:
        for stream in streams:
            stream.close()
