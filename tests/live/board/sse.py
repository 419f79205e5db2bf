"""A raw server-sent-events client over loopback, for the board's tests: it reads the
answer's head, then events one by one, each within a deadline."""

from __future__ import annotations

import base64
import socket
import time
from dataclasses import dataclass


@dataclass
class Event:
    name: str
    data: str
    id: str | None


def basic(token: str, user: str = "ada") -> dict[str, str]:
    raw = base64.b64encode(f"{user}:{token}".encode()).decode()
    return {"Authorization": f"Basic {raw}"}


class Stream:
    def __init__(self, port: int, target: str, headers: dict[str, str] | None = None) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        lines = [f"GET {target} HTTP/1.1", "Host: hive", "Accept: text/event-stream"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self._more(time.monotonic() + 10)
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        first, *rest = head.decode("latin-1").split("\r\n")
        self.status = int(first.split(" ")[1])
        self.headers = {k.lower(): v.strip() for k, _, v in (r.partition(":") for r in rest)}
        self.last_id: str | None = None

    def _more(self, deadline: float) -> None:
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the stream ended")
        self.buf += data

    def next(self, seconds: float = 10.0) -> Event:
        """The next event (comments and the retry line skipped)."""
        deadline = time.monotonic() + seconds
        while True:
            while b"\n\n" not in self.buf:
                self._more(deadline)
            block, _, self.buf = self.buf.partition(b"\n\n")
            fields: dict[str, str] = {}
            for line in block.decode().split("\n"):
                name, _, value = line.partition(": ")
                if name and not line.startswith(":"):
                    fields[name] = value
            if "event" in fields:
                if "id" in fields:
                    self.last_id = fields["id"]
                return Event(fields["event"], fields.get("data", ""), fields.get("id"))

    def until(self, wanted, seconds: float = 10.0) -> Event:
        """The first event for which `wanted(event)` holds."""
        deadline = time.monotonic() + seconds
        while True:
            event = self.next(max(0.01, deadline - time.monotonic()))
            if wanted(event):
                return event

    def ended(self, seconds: float = 10.0) -> bool:
        """True once the server closed the stream (within `seconds`)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self._more(deadline)
        except EOFError:
            return True
        except TimeoutError:
            return False

    def close(self) -> None:
        self.sock.close()
