"""A fake Anthropic Messages API on 127.0.0.1 for the real Claude Code CLI: `POST
/v1/messages` answered at once, streaming (SSE) as the real API does, by a script the
test sets (`FakeApi.script`): each request takes the next step, the last one repeats.

Steps: `("text", words)` a plain answer; `("write", path, content)` a tool call of
Claude Code's `Write` tool, then (on the next request) the text `done`; `("bash",
command)` a call of its `Bash` tool running `command`, then the text `done`; `("status",
code, error_type, message)` a refusal; `("limit", resets)` the 429 of an account's
usage limit as the API answers a subscription's sign-in (its `anthropic-ratelimit-unified-*`
headers: rejected, resetting at Unix seconds `resets`); `("cut",)` a stream broken
mid-way; `("huge", n)` an answer of one line of n characters.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = tuple[Any, ...]


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _message(model: str, blocks: list[dict[str, Any]], stop: str) -> list[dict[str, Any]]:
    start = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "input": {}},
                }
            )
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        }
    )
    events.append({"type": "message_stop"})
    return events


class FakeApi:
    def __init__(self) -> None:
        self.script: list[Step] = [("text", "hello")]
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def play(self, *steps: Step) -> None:
        with self._lock:
            self.script = list(steps)
            self.requests = []

    def _next(self, request: dict[str, Any]) -> Step:
        with self._lock:
            self.requests.append(request)
            if len(self.script) > 1:
                return self.script.pop(0)
            return self.script[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                step = api._next(request)
                model = request.get("model", "claude-fake")
                if step[0] == "status":
                    _, code, error_type, message = step
                    self._send(
                        code,
                        "application/json",
                        json.dumps(
                            {"type": "error", "error": {"type": error_type, "message": message}}
                        ).encode(),
                        {"retry-after": "0"},
                    )
                    return
                if step[0] == "limit":
                    error = {
                        "type": "rate_limit_error",
                        "message": "This request would exceed your account's rate limit.",
                    }
                    self._send(
                        429,
                        "application/json",
                        json.dumps({"type": "error", "error": error}).encode(),
                        {
                            "anthropic-ratelimit-unified-status": "rejected",
                            "anthropic-ratelimit-unified-reset": str(step[1]),
                            "anthropic-ratelimit-unified-representative-claim": "five_hour",
                            "retry-after": "0",
                        },
                    )
                    return
                if step[0] == "write":
                    _, path, content = step
                    blocks = [
                        {
                            "type": "tool_use",
                            "id": "toolu_fake",
                            "name": "Write",
                            "input": {"file_path": path, "content": content},
                        }
                    ]
                    api.script.insert(0, ("text", "done"))
                    self._stream(_message(model, blocks, "tool_use"))
                    return
                if step[0] == "bash":
                    blocks = [
                        {
                            "type": "tool_use",
                            "id": "toolu_fake_bash",
                            "name": "Bash",
                            "input": {"command": step[1], "description": "the scripted step"},
                        }
                    ]
                    api.script.insert(0, ("text", "done"))
                    self._stream(_message(model, blocks, "tool_use"))
                    return
                if step[0] == "huge":
                    text = "x" * int(step[1])
                    self._stream(_message(model, [{"type": "text", "text": text}], "end_turn"))
                    return
                if step[0] == "cut":
                    body = _sse(_message(model, [{"type": "text", "text": "half"}], "end_turn"))
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 3])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                blocks = [{"type": "text", "text": str(step[1])}]
                self._stream(_message(model, blocks, "end_turn"))

            def _stream(self, events: list[dict[str, Any]]) -> None:
                self._send(200, "text/event-stream", _sse(events), {})

            def _send(self, code: int, kind: str, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler


def running() -> Iterator[FakeApi]:
    api = FakeApi().start()
    try:
        yield api
    finally:
        api.stop()
