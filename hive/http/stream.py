"""Long-lived answers (the board's server-sent events) on the server's loop.

A route that streams answers a `Response` whose `stream` is an `Opener`. The loop sends
the head and the first bytes, then calls the opener once, on the loop thread, with a
`Sink` for that connection, and keeps the socket: it writes whatever a producer sends to
the sink, on any thread, as the client reads. No worker is held. The callable the opener
returns runs once when the stream ends for any reason (the client left, it read too
slowly, the server stops, or the producer closed the sink), so the producer forgets the
sink.

The opener must be quick and must not block (it runs on the loop thread): register the
sink and return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

# a client that has not read this much of what was sent to it is dropped
STREAM_BUFFER_MAX_BYTES = 1024 * 1024
STREAMS_MAX = 64  # open streams per server; one more is a 503


class Sink(Protocol):
    def send(self, data: bytes) -> bool:
        """Queue `data` for the client; False when the stream has ended (the producer
        should forget this sink)."""
        ...

    def close(self) -> None:
        """End the stream once what was sent is written."""
        ...


Opener = Callable[[Sink], Callable[[], None]]
