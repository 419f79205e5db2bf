"""A fake OpenAI Responses API on 127.0.0.1 for the real Codex CLI: `POST /v1/responses`
answered at once, streaming (SSE) as the real API does (response.created,
response.output_item.added, response.output_text.delta, response.output_item.done,
response.completed with its usage), by a script the test sets (`FakeResponses.play`):
each request takes the next step, the last one repeats.

Steps: `("text", words)` a plain answer; `("shell", command)` a function call of Codex's
`exec_command` tool, then (on the next request) the text `done`; `("status", code,
error_type, error_code, message)` a refusal; `("usage_limit", resets)` the 429 of a
usage limit (`usage_limit_reached`, resetting at Unix seconds `resets`); `("failed",
error_code, message)` a stream that ends in `response.failed`; `("cut",)` a stream broken
mid-way; `("huge", n)` an answer of one line of n characters.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = tuple[Any, ...]
INPUT_TOKENS = 100
OUTPUT_TOKENS = 20


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _response(number: int, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rid = f"resp_{number}"
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": rid, "status": "in_progress"}}
    ]
    for index, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            added = {**item, "status": "in_progress", "content": []}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": added}
            )
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": text,
                }
            )
        else:
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    usage = {
        "input_tokens": INPUT_TOKENS,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": OUTPUT_TOKENS,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
    }
    events.append(
        {
            "type": "response.completed",
            "response": {"id": rid, "status": "completed", "usage": usage},
        }
    )
    return events


def _message(number: int, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{number}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class FakeResponses:
    def __init__(self) -> None:
        self.script: list[Step] = [("text", "hello")]
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.keys: list[str] = []  # each request's bearer token
        self.retry_after = 0  # the seconds a refusal's retry-after header names
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL a provider's `base_url` names (the CLI adds `/responses`)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeResponses:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def play(self, *steps: Step) -> None:
        with self._lock:
            self.script = list(steps)
            self.requests = []
            self.paths = []
            self.keys = []

    def _next(self, path: str, key: str, request: dict[str, Any]) -> tuple[int, Step]:
        with self._lock:
            self.keys.append(key)
            self.requests.append(request)
            self.paths.append(path)
            number = len(self.requests)
            if len(self.script) > 1:
                return number, self.script.pop(0)
            return number, self.script[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(404, "application/json", b"{}", {})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                key = (self.headers.get("authorization") or "").removeprefix("Bearer ")
                number, step = api._next(self.path, key, request)
                if step[0] == "status":
                    _, code, error_type, error_code, message = step
                    error = {
                        "message": message,
                        "type": error_type,
                        "param": None,
                        "code": error_code,
                    }
                    body = json.dumps({"error": error}).encode()
                    self._send(
                        code, "application/json", body, {"retry-after": str(api.retry_after)}
                    )
                    return
                if step[0] == "usage_limit":
                    error = {
                        "type": "usage_limit_reached",
                        "message": "The usage limit has been reached",
                        "resets_at": int(step[1]),
                    }
                    body = json.dumps({"error": error}).encode()
                    self._send(429, "application/json", body, {"retry-after": "0"})
                    return
                if step[0] == "failed":
                    _, error_code, message = step
                    events = [
                        {"type": "response.created", "response": {"id": f"resp_{number}"}},
                        {
                            "type": "response.failed",
                            "response": {
                                "id": f"resp_{number}",
                                "status": "failed",
                                "error": {"code": error_code, "message": message},
                            },
                        },
                    ]
                    self._stream(events)
                    return
                if step[0] == "shell":
                    call = {
                        "type": "function_call",
                        "id": f"fc_{number}",
                        "call_id": f"call_{number}",
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": step[1]}),
                        "status": "completed",
                    }
                    with api._lock:
                        api.script.insert(0, ("text", "done"))
                    self._stream(_response(number, [call]))
                    return
                if step[0] == "huge":
                    self._stream(_response(number, [_message(number, "x" * int(step[1]))]))
                    return
                if step[0] == "cut":
                    body = _sse(_response(number, [_message(number, "half of an answer")]))
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 3])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self._stream(_response(number, [_message(number, str(step[1]))]))

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


def running() -> Iterator[FakeResponses]:
    api = FakeResponses().start()
    try:
        yield api
    finally:
        api.stop()
