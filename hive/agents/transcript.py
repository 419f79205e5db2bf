"""A turn's transcript: the one path from an agent's output to the caller's `on_line`.

It caps each line (LINE_MAX_BYTES) and the whole turn (TRANSCRIPT_MAX_BYTES) so a
runaway agent cannot fill the store; hides the turn's credential; calls `on_line` from
one thread at a time; holds every line until the turn's `begin()` (so the caller's ledger
row exists before the first line is stored); and survives a callback that raises: the
agent's pipe must keep draining or the agent would block on its next write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

# transcript kinds: the agent's two streams, and the hive's own notes about the turn
STDOUT = "stdout"
STDERR = "stderr"
HIVE = "hive"

LINE_MAX_BYTES = 4096
TRANSCRIPT_MAX_BYTES = 1024 * 1024
CUT_MARK = " [cut]"
# The turn's credential is replaced by this in every line, so an agent that echoes its
# environment does not put the key in the store; a value shorter than
# REDACT_MIN_CHARS is no real credential, and hiding it would mangle ordinary text.
REDACTED = "<key>"
REDACT_MIN_CHARS = 8
# How long a stopper's note may wait for the transcript before it is dropped.
IMPATIENT_SECONDS = 0.1

OnLine = Callable[[str, str], None]
log = logging.getLogger("hive.agents")


def cap_line(text: str) -> str:
    """`text` cut to LINE_MAX_BYTES of UTF-8, marked when it was cut."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= LINE_MAX_BYTES:
        return text
    return raw[:LINE_MAX_BYTES].decode("utf-8", "ignore") + CUT_MARK


class Transcript:
    def __init__(
        self, on_line: OnLine, begun: threading.Event, issue: int, secret: str = ""
    ) -> None:
        self._on_line = on_line
        self._secret = secret if len(secret) >= REDACT_MIN_CHARS else ""
        self._begun = begun
        self._issue = issue
        self._lock = threading.Lock()
        self._kept_bytes = 0
        self._dropped_lines = 0
        self._lost_lines = 0
        self._closed = False

    def line(self, kind: str, text: str) -> None:
        """Deliver one of the agent's lines, unless the turn's cap is reached."""
        if self._secret:
            text = text.replace(self._secret, REDACTED)
        text = cap_line(text)
        self._begun.wait()
        with self._lock:
            if self._closed:
                return
            size = len(text.encode("utf-8", "replace"))
            if self._kept_bytes + size > TRANSCRIPT_MAX_BYTES:
                if not self._dropped_lines:
                    self._deliver(HIVE, f"transcript cap of {TRANSCRIPT_MAX_BYTES} bytes reached")
                self._dropped_lines += 1
                return
            self._kept_bytes += size
            self._deliver(kind, text)

    def note(self, text: str, *, patient: bool = True) -> None:
        """Deliver one of the hive's own lines about the turn (never dropped by the cap).
        A stopper passes `patient=False`: its stop is bounded, so rather than wait behind
        a slow `on_line` it drops the note (and logs it)."""
        self._begun.wait()
        if not self._lock.acquire(timeout=-1 if patient else IMPATIENT_SECONDS):
            log.warning("transcript busy; note dropped: %s", text, extra={"issue": self._issue})
            return
        try:
            if not self._closed:
                self._deliver(HIVE, cap_line(text))
        finally:
            self._lock.release()

    def close(self) -> None:
        """Say what the cap dropped; later lines are discarded (the turn has ended)."""
        self._begun.wait()
        with self._lock:
            if self._closed:
                return
            if self._dropped_lines:
                self._deliver(HIVE, f"{self._dropped_lines} lines past the cap were not kept")
            if self._lost_lines:
                log.warning(
                    "on_line raised for %d lines of this turn",
                    self._lost_lines,
                    extra={"issue": self._issue},
                )
            self._closed = True

    def _deliver(self, kind: str, text: str) -> None:
        try:
            self._on_line(kind, text)
        except Exception:
            # the first failure with its traceback; the rest are counted, not logged
            if not self._lost_lines:
                log.exception("on_line raised; the line is lost", extra={"issue": self._issue})
            self._lost_lines += 1
