"""The server's loop: one thread owns every socket, a fixed pool of workers answers.

A connection lives in three phases: READING (the loop gathers the head and the body
until the request is whole or its deadline passes), AT_WORKER (off the selector, one
worker runs the routes), WRITING (the loop sends the answer as the client reads, then
closes). An answer with a stream (`hive.http.stream`) goes on to STREAMING: the loop
writes what its producer sends until the client leaves, reads too slowly, or the server
stops; at most `streams_max` at once, one more is an at-once 503. A fault found while
reading is answered by the loop itself, at once, without a worker: 400, 408, 411, 413,
431, 501, 505, and 503 when the pool's queue or the connection count is full. One
request per connection (`Connection: close`).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable

from hive.http.conn import Conn, Phase, Sink
from hive.http.head import Fault, parse_head
from hive.http.routes import Request, Response, Routes, error
from hive.http.stream import STREAM_BUFFER_MAX_BYTES
from hive.http.workers import Workers, log_answer

log = logging.getLogger("hive.http")

REQUEST_DEADLINE_SECONDS = 10.0  # from accept to the last byte of the body
WRITE_STALL_SECONDS = 10.0  # a client that reads nothing for this long is dropped
LINGER_SECONDS = 2.0  # after an early answer, how long the rest of a request is read
HEAD_MAX_BYTES = 16 * 1024
READ_CHUNK_BYTES = 64 * 1024
# bodies past the routes' ordinary bound (GitHub's deliveries, up to 25 MB) buffered at
# once, in bytes; one more is an at-once 503: a signature is checked only once the body
# is whole, so anyone could otherwise make the server hold 25 MB per connection
LARGE_BODIES_MAX_BYTES = 64 * 1024 * 1024
TICK_SECONDS = 0.5  # the loop wakes at least this often
EXPIRE_EVERY_SECONDS = 0.1  # and looks at the deadlines at most this often
FULL_LOG_EVERY_SECONDS = 10.0
STREAM_RETRY_AFTER_SECONDS = 10  # a 503 for too many streams says when to try again
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class Loop:
    """Start with `start()`; `stop()` closes the listener and every connection, tells the
    workers to end, and waits up to WORKER_JOIN_SECONDS (hive.http.workers) for them."""

    def __init__(
        self,
        listener: socket.socket,
        routes: Routes,
        *,
        workers: int,
        queue_max: int,
        connections_max: int,
        streams_max: int,
        stream_refused: Callable[[], None] = lambda: None,
    ) -> None:
        self.listener = listener
        self.port = int(listener.getsockname()[1])
        self.routes = routes
        self.connections_max = connections_max
        self.streams_max = streams_max
        self.streams = 0  # connections STREAMING now (read on the loop thread)
        self._large = 0  # bytes of large bodies the open connections may buffer
        self._stream_refused = stream_refused  # called per stream answered 503 at the cap
        self._selector = selectors.DefaultSelector()
        self._waker_r, self._waker_w = socket.socketpair()
        self._waker_r.setblocking(False)
        self._waker_w.setblocking(False)
        self.queue_max = queue_max
        self._done: collections.deque[tuple[Conn, Response]] = collections.deque()
        # what producers sent to streams (None: close that stream once written)
        self._pushed: collections.deque[tuple[Conn, bytes | None]] = collections.deque()
        self._conns: dict[int, Conn] = {}
        self._stopping = threading.Event()
        # a wake byte is in the socket pair and the loop has not read it yet: the answers
        # handed in meanwhile ride on it (one send per loop turn, not one per answer)
        self._wake_sent = False
        self._full_at = 0.0
        self._expire_at = 0.0
        self._full_count = 0
        self._thread = threading.Thread(target=self._run, name="hive-http", daemon=True)
        self._workers = Workers(routes, workers, self._answered)

    def start(self) -> None:
        self._selector.register(self.listener, selectors.EVENT_READ, "accept")
        self._selector.register(self._waker_r, selectors.EVENT_READ, "wake")
        self._workers.start()
        self._thread.start()

    @property
    def waiting(self) -> int:
        """Requests read whole and waiting for a worker."""
        return self._workers.waiting

    def stop(self) -> None:
        self._stopping.set()
        self._wake()
        self._thread.join()
        self._workers.stop()
        self._waker_r.close()
        self._waker_w.close()

    # ---- the loop thread -------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                for key, events in self._selector.select(TICK_SECONDS):
                    if key.data == "accept":
                        self._accept()
                    elif key.data == "wake":
                        self._drain_waker()
                    elif key.data.phase is Phase.LINGERING:
                        self._drop_input(key.data)
                    elif key.data.phase is Phase.STREAMING:
                        if events & selectors.EVENT_READ:
                            self._drop_input(key.data)
                        if events & selectors.EVENT_WRITE and key.data.sock.fileno() != -1:
                            self._write(key.data)
                    elif events & selectors.EVENT_READ:
                        self._read(key.data)
                    else:
                        self._write(key.data)
                self._take_answers()
                self._take_pushed()
                now = time.monotonic()
                if now >= self._expire_at:  # every connection is looked at, so not too often
                    self._expire(now)
                    self._expire_at = now + EXPIRE_EVERY_SECONDS
        except Exception:
            log.exception("the HTTP loop failed; the server stops answering")
        finally:
            for conn in list(self._conns.values()):
                self._close(conn)
            self._selector.close()
            self.listener.close()

    def _accept(self) -> None:
        for _ in range(64):  # a burst is accepted in one go, not one per select
            try:
                sock, addr = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # out of file descriptors, say: the next tick retries
                log.warning("accept failed: %s", err)
                return
            sock.setblocking(False)
            now = time.monotonic()
            conn = Conn(sock, str(addr[0]), now, now + REQUEST_DEADLINE_SECONDS)
            self._conns[sock.fileno()] = conn
            if len(self._conns) > self.connections_max:
                self._full("connections")
                self._answer(conn, error(503, "the server is full; try again"), log_it=False)
                continue
            self._selector.register(sock, selectors.EVENT_READ, conn)

    def _read(self, conn: Conn) -> None:
        data = self._recv(conn)
        if not data:  # nothing yet, or the client went away before its request was whole
            return
        conn.buf += data
        if conn.head is None:
            found = parse_head(conn.buf, HEAD_MAX_BYTES, self.routes.body_max_for)
            if found is None:
                return
            if isinstance(found, Fault):
                self._answer(conn, error(found.status, found.message), log_it=True)
                return
            if found.body_length > self.routes.body_max_bytes:
                if self._large + found.body_length > LARGE_BODIES_MAX_BYTES:
                    self._full("large bodies")
                    busy = error(503, "too many large bodies at once; try again")
                    self._answer(conn, busy, log_it=False)
                    return
                conn.large = found.body_length
                self._large += conn.large
            conn.head = found
            if found.expect_continue and len(conn.buf) < found.size + found.body_length:
                self._send_now(conn, _CONTINUE)
        head = conn.head
        if len(conn.buf) < head.size + head.body_length:
            return
        body = bytes(conn.buf[head.size : head.size + head.body_length])
        conn.request = Request(head.method, head.target, head.headers, body, conn.addr)
        conn.buf = bytearray()
        self._selector.unregister(conn.sock)
        conn.phase = Phase.AT_WORKER
        if self._workers.waiting >= self.queue_max:
            self._full("workers")
            self._answer(conn, error(503, "the server is busy; try again"), log_it=False)
            return
        self._workers.put(conn)

    def _write(self, conn: Conn) -> None:
        try:
            sent = conn.sock.send(conn.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        conn.out = conn.out[sent:]
        conn.deadline = time.monotonic() + WRITE_STALL_SECONDS
        if conn.out:
            return
        if conn.phase is Phase.STREAMING:
            if conn.ending:
                self._close(conn)
                return
            # all written: wait for the producer (reading only to see the client leave)
            conn.deadline = float("inf")
            self._selector.modify(conn.sock, selectors.EVENT_READ, conn)
            return
        if not conn.linger:
            self._close(conn)
            return
        # closing with unread input would reset the connection, and the client could
        # lose the answer: say we are done, then read until the client closes too
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(conn)
            return
        conn.phase = Phase.LINGERING
        conn.deadline = time.monotonic() + LINGER_SECONDS
        self._selector.modify(conn.sock, selectors.EVENT_READ, conn)

    def _drop_input(self, conn: Conn) -> None:
        self._recv(conn)

    def _recv(self, conn: Conn) -> bytes | None:
        """What the client sent since the last read; None when nothing is there yet,
        b"" when it went away (or the socket failed): the connection is then closed."""
        try:
            data = conn.sock.recv(READ_CHUNK_BYTES)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            data = b""
        if not data:
            self._close(conn)
        return data

    def _answer(self, conn: Conn, response: Response, *, log_it: bool) -> None:
        """Start writing `response` on `conn` (from the loop thread only)."""
        head_only = conn.request is not None and conn.request.method == "HEAD"
        if response.stream is not None and not head_only:
            if self.streams < self.streams_max:
                self._open_stream(conn, response)
                return
            self._full("streams")
            self._refused_stream()
            message = (
                f"too many open event streams (at most {self.streams_max}); "
                "close another board tab or try again later"
            )
            response = error(503, message, {"Retry-After": str(STREAM_RETRY_AFTER_SECONDS)})
        if conn.phase is Phase.READING:
            conn.linger = True
            if conn.sock.fileno() in self._selector.get_map():
                self._selector.unregister(conn.sock)
        if log_it:
            log_answer(self.routes, conn, response)
        # HEAD: the head GET would send (its Content-Length too), without the body
        version = conn.head.version if conn.head is not None else "HTTP/1.1"
        conn.out = memoryview(response.head(version) + (b"" if head_only else response.body))
        conn.phase = Phase.WRITING
        conn.deadline = time.monotonic() + WRITE_STALL_SECONDS
        self._selector.register(conn.sock, selectors.EVENT_WRITE, conn)

    def _open_stream(self, conn: Conn, response: Response) -> None:
        assert response.stream is not None
        version = conn.head.version if conn.head is not None else "HTTP/1.1"
        conn.out = memoryview(response.head(version) + response.body)
        conn.phase = Phase.STREAMING
        conn.deadline = time.monotonic() + WRITE_STALL_SECONDS
        conn.sink = Sink(self._push, conn)
        self.streams += 1
        self._selector.register(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
        try:
            conn.on_close = response.stream(conn.sink)
        except Exception:
            log.exception("a stream's producer failed to open it")
            self._close(conn)

    def _push(self, conn: Conn, data: bytes | None) -> None:
        """From a producer's thread: hand `data` to the loop for `conn`."""
        self._pushed.append((conn, data))
        if not self._wake_sent:
            self._wake_sent = True
            self._wake()

    def _take_pushed(self) -> None:
        while self._pushed:
            conn, data = self._pushed.popleft()
            if conn.phase is not Phase.STREAMING or conn.sock.fileno() == -1:
                continue
            if data is None:
                conn.ending = True
                if not conn.out:
                    self._close(conn)
                continue
            if len(conn.out) + len(data) > STREAM_BUFFER_MAX_BYTES:
                log.info("%s reads its event stream too slowly; dropped", conn.addr)
                self._close(conn)
                continue
            if not conn.out:
                conn.out = memoryview(data)
                conn.deadline = time.monotonic() + WRITE_STALL_SECONDS
                events = selectors.EVENT_READ | selectors.EVENT_WRITE
                self._selector.modify(conn.sock, events, conn)
            else:
                conn.out = memoryview(bytes(conn.out) + data)

    def _send_now(self, conn: Conn, data: bytes) -> None:
        # a failed send is settled by the body's read or its deadline
        with contextlib.suppress(OSError):
            conn.sock.send(data)

    def _take_answers(self) -> None:
        while self._done:
            conn, response = self._done.popleft()
            if conn.sock.fileno() == -1:
                continue
            self._answer(conn, response, log_it=False)

    def _expire(self, now: float) -> None:
        for conn in [c for c in self._conns.values() if c.deadline < now]:
            if conn.phase is Phase.READING:
                message = f"the request was not whole within {REQUEST_DEADLINE_SECONDS:g} s"
                self._answer(conn, error(408, message), log_it=False)
            elif conn.phase is Phase.WRITING:
                log.debug("%s stopped reading its answer; dropped", conn.addr)
                self._close(conn)
            elif conn.phase in (Phase.LINGERING, Phase.STREAMING):
                if conn.phase is Phase.STREAMING:
                    log.info("%s stopped reading its event stream; dropped", conn.addr)
                self._close(conn)

    def _close(self, conn: Conn) -> None:
        fd = conn.sock.fileno()
        if fd == -1:  # closed already
            return
        if fd in self._selector.get_map():
            self._selector.unregister(conn.sock)
        self._conns.pop(fd, None)
        conn.sock.close()
        self._large -= conn.large
        conn.large = 0
        if conn.phase is Phase.STREAMING:
            self.streams -= 1
            if conn.sink is not None:
                conn.sink.closed = True
            if conn.on_close is not None:
                try:
                    conn.on_close()
                except Exception:
                    log.exception("a stream's producer failed on its close")

    def _refused_stream(self) -> None:
        try:
            self._stream_refused()
        except Exception:  # a count that fails never stops the answer
            log.exception("counting a refused stream failed")

    def _full(self, what: str) -> None:
        self._full_count += 1
        now = time.monotonic()
        if now - self._full_at >= FULL_LOG_EVERY_SECONDS:
            log.warning("HTTP %s full: %d answered 503", what, self._full_count)
            self._full_at, self._full_count = now, 0

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # already awake (the buffer is full) or stopped
            self._waker_w.send(b"x")

    def _drain_waker(self) -> None:
        try:
            while self._waker_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        # after the bytes are read (a byte sent from here on stays for the next select)
        # and before the answers are taken (one handed in from here on sends again)
        self._wake_sent = False

    def _answered(self, conn: Conn, response: Response) -> None:
        """From a worker's thread: hand the loop `response` to write on `conn`."""
        self._done.append((conn, response))
        if not self._wake_sent:
            self._wake_sent = True
            self._wake()
