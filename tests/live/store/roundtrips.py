"""Counting the round trips a piece of store code makes: libpq's own trace of what the
client sent (PQtrace), so nothing of the code under test is replaced. Each simple query
(`Query`, as BEGIN and COMMIT go) and each extended-protocol batch (`Sync`, as every
parameterised statement ends) is one round trip."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import pq

_SENT = re.compile(r"^F\t\d+\t(Query|Sync)\b", re.MULTILINE)


class Trips:
    """The round trips counted at the block's end (`count`), and the trace they were read
    from (`trace`, for a failing assertion to show)."""

    def __init__(self) -> None:
        self.count = 0
        self.trace = ""


@contextmanager
def round_trips(conn: psycopg.Connection[Any]) -> Iterator[Trips]:
    """Count the round trips `conn` makes inside the block."""
    trips = Trips()
    with tempfile.TemporaryFile("w+") as out:
        conn.pgconn.trace(out.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield trips
        finally:
            conn.pgconn.untrace()
            out.seek(0)
            trips.trace = out.read()
            trips.count = len(_SENT.findall(trips.trace))
