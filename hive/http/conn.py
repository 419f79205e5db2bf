"""One client connection as the HTTP loop holds it: its phase, buffers and deadline, and
the sink a stream's producer writes to. Made by the loop when it accepts a socket; only
the loop thread changes a connection, a producer only hands data to its sink.
"""

from __future__ import annotations

import enum
import socket
from collections.abc import Callable

from hive.http.head import Head
from hive.http.routes import Request


class Phase(enum.Enum):
    READING = 1
    AT_WORKER = 2
    WRITING = 3
    LINGERING = 4  # answered before the request was read whole: read and drop the rest
    STREAMING = 5  # a long-lived answer: written as its producer sends


class Conn:
    __slots__ = (
        "addr",
        "buf",
        "deadline",
        "ending",
        "head",
        "large",
        "linger",
        "on_close",
        "out",
        "phase",
        "request",
        "sink",
        "sock",
        "started",
    )

    def __init__(self, sock: socket.socket, addr: str, now: float, deadline: float) -> None:
        self.sock = sock
        self.addr = addr
        self.started = now
        self.deadline = deadline  # the request's, until it is read whole
        self.buf = bytearray()
        self.head: Head | None = None
        self.large = 0  # bytes of a large body this connection may buffer (see above)
        self.request: Request | None = None
        self.out = memoryview(b"")
        self.phase = Phase.READING
        self.linger = False
        self.sink: Sink | None = None
        self.on_close: Callable[[], None] | None = None
        self.ending = False  # a streaming producer closed: close once `out` is written


class Sink:
    """A stream's end a producer writes to (any thread); see `hive.http.stream.Sink`."""

    __slots__ = ("_conn", "_push", "closed")

    def __init__(self, push: Callable[[Conn, bytes | None], None], conn: Conn) -> None:
        self._push = push  # the loop's hand-over (None: close once written)
        self._conn = conn
        self.closed = False  # set by the loop when the connection closes

    def send(self, data: bytes) -> bool:
        if self.closed:
            return False
        self._push(self._conn, data)
        return True

    def close(self) -> None:
        if not self.closed:
            self._push(self._conn, None)
