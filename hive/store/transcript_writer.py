"""A turn's transcript on its way to `queen_transcript`: the turn hands each line to
`put` (which only queues it, so the agent's pipe never waits on the store) and one writer
thread appends them in order. A line the store refuses is logged and dropped: the
transcript is a trace, and losing a line must not stop the turn."""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from typing import Any

from psycopg_pool import ConnectionPool

from hive.store import transcript

log = logging.getLogger("hive.bee")

# how long `close` waits for the queued lines to reach the store
FLUSH_SECONDS = 5.0
_END = ("", "")


class TranscriptWriter:
    def __init__(self, db: ConnectionPool[Any], conversation_id: uuid.UUID, issue: int) -> None:
        self._db = db
        self._conversation_id = conversation_id
        self._issue = issue
        self._lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self._thread = threading.Thread(target=self._write, name=f"transcript-{issue}", daemon=True)
        self._thread.start()
        self.dropped = 0

    def put(self, kind: str, text: str) -> None:
        self._lines.put((kind, text))

    def close(self) -> None:
        """Write what is queued (up to FLUSH_SECONDS), then stop; safe twice."""
        self._lines.put(_END)
        self._thread.join(FLUSH_SECONDS)

    def _write(self) -> None:
        while True:
            line = self._lines.get()
            if line is _END:
                return
            try:
                transcript.append(self._db, self._conversation_id, self._issue, *line)
            except Exception as err:
                self.dropped += 1
                log.warning("transcript line dropped: %s", err, extra={"issue": self._issue})
