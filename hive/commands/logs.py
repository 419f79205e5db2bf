"""`hive logs N [--follow]`: issue N's transcript, what its turns said, in order (a
header names each attempt). With --follow, new lines are printed as they come until
the order in flight ends, then it exits 0. Ctrl-C exits 130 quietly (a second one at
once). Exit 3: no such issue. A control character in a line (an escape an agent printed)
is shown escaped (`\x1b`), as `hive status` shows it."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import uuid
from collections.abc import Callable
from datetime import UTC
from types import FrameType

from hive.rules.text import shown
from hive.services import history
from hive.services.database import store_connection
from hive.services.issues import issue_number
from hive.settings import Settings

INTERRUPTED_EXIT = 130
TAB = frozenset("\t")  # a tab steers nothing: kept as it is


class _Interrupted(Exception):
    """Ctrl-C came while the follow waited between two reads."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("logs", help="an issue's transcript", description=__doc__)
    parser.add_argument("issue", metavar="N", help="the issue number")
    parser.add_argument(
        "-f", "--follow", action="store_true", help="print new lines until the order ends"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    issue = issue_number(args.issue)
    # Ctrl-C only sets a flag, so it never cuts a query short (psycopg would then warn on
    # the way out); the follow's wait between reads sees it at once.
    stopping = threading.Event()

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        if stopping.is_set():
            raise KeyboardInterrupt
        stopping.set()

    def pause(seconds: float) -> None:
        if stopping.wait(seconds):
            raise _Interrupted

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        _print(issue, args.follow, pause, stopping)
    except _Interrupted:
        pass
    finally:
        signal.signal(signal.SIGINT, previous)
    return INTERRUPTED_EXIT if stopping.is_set() else 0


def _print(
    issue: int, follow: bool, pause: Callable[[float], None], stopping: threading.Event
) -> None:
    with store_connection(Settings.from_env()) as db:
        if follow and not history.in_flight(db, issue):
            print(f"#{issue} has no order in flight: nothing to follow", file=sys.stderr)
        current: uuid.UUID | None = None
        for entry in history.transcript(db, issue, follow=follow, sleep=pause):
            line = entry.line
            at = line.at.astimezone(UTC)
            if line.conversation_id != current:
                current = line.conversation_id
                which = f"attempt {entry.attempt}" if entry.attempt is not None else "an attempt"
                print(f"--- {which}, {at:%Y-%m-%d} (conversation {str(current)[:8]}) ---")
            # an agent's output is data: an escape it printed is shown, never obeyed
            print(f"{at:%H:%M:%S} {shown(line.kind)}: {shown(line.text, TAB)}", flush=True)
            if stopping.is_set():
                return
