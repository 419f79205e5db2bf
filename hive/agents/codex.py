"""`codex`: Codex CLI's non-interactive JSON mode, as a command turn (command.py) reading
its stream.

It runs `codex exec --json --dangerously-bypass-approvals-and-sandbox -` (the brief on
stdin; the turn's boundary is the hive's), in the worktree, in its own process group,
with the key in OPENAI_API_KEY and its home (CODEX_HOME) private to the turn. That home
holds one config.toml the adapter writes: a provider `hive` speaking the Responses API
(`POST <base_url>/responses`) at OPENAI_BASE_URL when HIVE_AGENT_PASS_ENV passes it
(Codex itself ignores that variable), else at OpenAI; the key is named there by its
variable (`env_key`), never written; and Codex's own retries of a refused request are
bounded (`request_max_retries`, `stream_max_retries`: it retries 4 and 5 times by
default, each after the provider's retry-after). `HIVE_AGENT_BIN` names the executable.

The stream, one JSON object a line, read as it comes (`read_line`):
- `thread.started`: the thread id, kept as the conversation carried to the next attempt;
- `item.completed`: an agent message to the transcript, a command or a file change as
  one line each, an error item as a note;
- `error`: a line (Codex retries by itself: `Reconnecting... 1/2 (...)`);
- `turn.failed`: why the turn failed; a refused request (429, quota, authentication,
  overloaded) is sorted by `refusal_of` into a word of `hive.rules.keys.sort_refusal`;
- `turn.completed`: the usage, counted once, here. Codex reports the thread's total, so
  a resumed thread's earlier usage (read from its restored file) is taken off.

A conversation given in `ctx.resume` is restored where Codex looks for it (its home's
`sessions/`, under the date of the thread's start) and resumed with `exec resume <id>`;
one that cannot be restored starts fresh, with a sentence in the transcript.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hive.agents.base import TurnContext, TurnStartError
from hive.agents.command import CommandTurn
from hive.agents.conversation import (
    CONVERSATION_MAX_BYTES,
    Conversation,
    not_kept,
    restorable,
    without_key,
)
from hive.agents.protocol import Usage

AGENT = "codex"
DEFAULT_BIN = "codex"
KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Codex's own retries of a refused request or a broken stream; the key's rest is the hive's
MAX_RETRIES = 2
# a stream line is parsed whole up to this size (an answer is one line)
STREAM_LINE_MAX_BYTES = 4 * 1024 * 1024
PROVIDER = "openai"
_THREAD_ID = re.compile(r"^[A-Za-z0-9-]{1,64}$")
_STAMP = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})")
_STATUS = re.compile(r"\b(?:status:?\s*)(\d{3})\b")
_SUMMARY_CHARS = 200


@dataclass(frozen=True)
class Seen:
    """What one stream line told: transcript lines, and what the turn keeps. `total` is
    the thread's usage so far (`turn.completed`)."""

    lines: tuple[str, ...] = ()
    thread_id: str | None = None
    refusal: str | None = None
    total: Usage | None = None


def refusal_of(message: str) -> str | None:
    """The refusal word (`hive.rules.keys.sort_refusal`) of a failed turn's message, or
    None when the message is no refusal of the provider's. Codex 0.171 says `Quota
    exceeded. Check your plan and billing details.`, `exceeded retry limit, last status:
    429 Too Many Requests`, `rate limit exceeded: ...`, `unexpected status 401
    Unauthorized: ...`, `Selected model is at capacity. ...`."""
    text = message.lower()
    if any(w in text for w in ("quota", "usage limit", "billing", "credit", "insufficient")):
        return "quota"
    found = _STATUS.search(text)
    status = found.group(1) if found else None
    if status in ("401", "403") or "unauthorized" in text or "invalid_api_key" in text:
        return "authentication_failed"
    if status == "429" or "rate limit" in text or "too many requests" in text:
        return "rate_limit"
    if status in ("503", "529") or "overloaded" in text or "at capacity" in text:
        return "overloaded"
    return None


def read_line(text: str) -> Seen:
    """One line of `codex exec --json` (see the module). A line that is not a JSON object
    is kept as it is."""
    try:
        event = json.loads(text)
    except ValueError:
        return Seen(lines=(text,))
    if not isinstance(event, dict):
        return Seen(lines=(text,))
    kind = event.get("type")
    if kind == "thread.started":
        thread = event.get("thread_id")
        ok = isinstance(thread, str) and _THREAD_ID.match(thread)
        return Seen(lines=(f"thread {thread}",), thread_id=thread if ok else None)
    if kind == "item.completed":
        return Seen(lines=_item(event.get("item")))
    if kind == "error":
        return Seen(lines=(f"codex: {event.get('message')}",))
    if kind == "turn.failed":
        message = str((event.get("error") or {}).get("message") or "")
        return Seen(lines=(f"turn failed: {message}",), refusal=refusal_of(message))
    if kind == "turn.completed":
        return Seen(lines=("turn completed",), total=_usage(event.get("usage")))
    return Seen()


def _item(item: Any) -> tuple[str, ...]:
    if not isinstance(item, dict):
        return ()
    kind = item.get("type")
    if kind == "agent_message":
        return tuple(f"assistant: {line}" for line in str(item.get("text") or "").splitlines())
    if kind == "command_execution":
        command = str(item.get("command"))[:_SUMMARY_CHARS]
        return (f"tool exec: {command} (exit {item.get('exit_code')})",)
    if kind == "file_change":
        paths = [str(c.get("path")) for c in item.get("changes") or () if isinstance(c, dict)]
        return (f"files changed: {', '.join(paths)}"[:_SUMMARY_CHARS],)
    if kind in ("mcp_tool_call", "web_search"):
        return (f"tool {kind}: {json.dumps(item, ensure_ascii=False)[:_SUMMARY_CHARS]}",)
    if kind == "error":
        return (f"codex: {item.get('message')}",)
    return ()


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        provider=PROVIDER,
        input_tokens=_count(raw.get("input_tokens")),  # cached tokens are a part of it
        output_tokens=_count(raw.get("output_tokens")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _payloads(data: bytes, kind: bytes) -> Iterator[dict[str, Any]]:
    """The payloads of a session file's records of `kind` (`token_count`,
    `turn_context`), in order; a line that is not a JSON record is passed over."""
    for raw in data.splitlines():
        if b'"' + kind + b'"' not in raw:
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        payload = record.get("payload") if isinstance(record, dict) else None
        if isinstance(payload, dict):
            yield payload


def earlier_total(data: bytes) -> Usage:
    """The thread's usage as a session's file left it (its last `token_count`): what a
    resumed thread's `turn.completed` counts again."""
    total = Usage(provider=PROVIDER)
    for payload in _payloads(data, b"token_count"):
        info = payload.get("info")
        if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
            total = _usage(info["total_token_usage"]) or total
    return total


def last_model(data: bytes) -> str | None:
    """The model of a session's file's last turn (`turn_context`), if it names one."""
    model = None
    for payload in _payloads(data, b"turn_context"):
        if isinstance(payload.get("model"), str):
            model = payload["model"]
    return model


def session_path(data: bytes, thread_id: str) -> Path:
    """Where Codex looks for the session `thread_id` (relative to its home): its date's
    folder under `sessions/`, from the file's first line (`session_meta`). Raises
    ValueError when `data` is not that thread's session."""
    first = data.split(b"\n", 1)[0]
    try:
        meta = json.loads(first)
    except ValueError:
        raise ValueError("its first line is not JSON") from None
    payload = meta.get("payload") if isinstance(meta, dict) else None
    if not (meta.get("type") == "session_meta" and isinstance(payload, dict)):
        raise ValueError("it does not start with the session's meta line")
    if payload.get("id") != thread_id:
        raise ValueError(f"it is the session of {payload.get('id')!r}, not {thread_id!r}")
    stamp = _STAMP.match(str(payload.get("timestamp") or meta.get("timestamp") or ""))
    if stamp is None:
        raise ValueError("its meta line has no timestamp")
    y, mo, d, h, mi, s = stamp.groups()
    return Path("sessions", y, mo, d, f"rollout-{y}-{mo}-{d}T{h}-{mi}-{s}-{thread_id}.jsonl")


def config_toml(base_url: str) -> str:
    """The turn's config.toml: the provider `hive` at `base_url`, its key read from
    KEY_VARIABLE, its retries bounded. Raises TurnStartError for a base URL that is not
    an http(s) URL."""
    try:
        parts = urlsplit(base_url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        usable = False
    if not usable or not base_url.isprintable() or '"' in base_url:
        raise TurnStartError(
            f"{BASE_URL_VARIABLE}={base_url!r} is not an http(s) URL such as {DEFAULT_BASE_URL}"
        )
    quoted = json.dumps(base_url)  # a TOML basic string: JSON's escapes are TOML's
    return "\n".join(
        [
            'model_provider = "hive"',
            "[model_providers.hive]",
            'name = "hive"',
            f"base_url = {quoted}",
            f'env_key = "{KEY_VARIABLE}"',
            'wire_api = "responses"',
            f"request_max_retries = {MAX_RETRIES}",
            f"stream_max_retries = {MAX_RETRIES}",
            "[analytics]",
            "enabled = false",
            "",
        ]
    )


class CodexTurn(CommandTurn):
    read_line_max_bytes = STREAM_LINE_MAX_BYTES

    def __init__(self, ctx: TurnContext) -> None:
        self._thread_id: str | None = None
        self._home: Path | None = None
        self._earlier = Usage(provider=PROVIDER)
        self._fresh: str | None = None  # why an earlier conversation was not resumed
        self._resumed = False
        resume = ctx.resume if ctx.resume and ctx.resume.agent == AGENT else None
        self._resume = resume
        argv = [
            ctx.launch.agent_bin or DEFAULT_BIN,
            "exec",
            "--json",
            "--color",
            "never",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
        ]
        if resume is not None:
            argv += ["resume", resume.session_id]
        argv.append("-")  # the brief, from stdin
        self._argv = argv
        super().__init__(ctx, "", argv=argv)

    def _prepare(self, private_dir: Path, env: dict[str, str]) -> None:
        home = private_dir / "codex"
        home.mkdir()
        self._home = home
        base_url = env.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL
        (home / "config.toml").write_text(config_toml(base_url), encoding="utf-8")
        env["CODEX_HOME"] = str(home)
        env.pop(KEY_VARIABLE, None)
        if self.ctx.key:
            env[KEY_VARIABLE] = self.ctx.key
        if self._resume is not None:
            try:
                data = restorable(self._resume)
                where = home / session_path(data, self._resume.session_id)
                where.parent.mkdir(parents=True)
                where.write_bytes(data)
                self._earlier = earlier_total(data)
                self._resumed = True
            except (OSError, ValueError) as exc:
                self._argv[-3:-1] = []  # no `resume <id>`: a fresh thread
                self._fresh = f"the earlier conversation was not restored ({exc}): starting fresh"

    def _stdout(self, text: str) -> str | None:
        if self._fresh is not None:
            fresh, self._fresh = self._fresh, None
            self.transcript.note(fresh)
        seen = read_line(text)
        if seen.thread_id:
            self._thread_id = seen.thread_id
        if seen.refusal:
            self._saw_refusal(seen.refusal)
        if seen.total is not None:
            self._saw_usage(
                replace(
                    seen.total,
                    input_tokens=max(0, seen.total.input_tokens - self._earlier.input_tokens),
                    output_tokens=max(0, seen.total.output_tokens - self._earlier.output_tokens),
                )
            )
        for line in seen.lines[:-1]:
            self.transcript.line("stdout", line)
        return seen.lines[-1] if seen.lines else None

    def _before_cleanup(self) -> None:
        """Keep the thread's session file for the next attempt (capped, without the key),
        and name the model the turn used."""
        if self._thread_id is None and self._resumed:
            self.transcript.note(
                "the CLI could not resume the earlier conversation: the next attempt starts fresh"
            )
        if self._thread_id is None or self._home is None:
            return
        found = sorted((self._home / "sessions").glob(f"*/*/*/rollout-*-{self._thread_id}.jsonl"))
        if not found:
            self.transcript.note("the CLI left no session file: the next attempt starts fresh")
            return
        size = found[-1].stat().st_size
        if size > CONVERSATION_MAX_BYTES:
            why = f"the session file ({size} bytes) was over {CONVERSATION_MAX_BYTES}"
            self.transcript.note(f"{why}: not kept")
            self.conversation = not_kept(AGENT, self._thread_id, why)
            return
        data = found[-1].read_bytes()
        model = last_model(data)
        with self._lock:
            if self._usage is not None and model:
                self._usage = replace(self._usage, model=model)
        self.conversation = Conversation(AGENT, self._thread_id, without_key(data, self.ctx.key))


def start_codex(ctx: TurnContext) -> CodexTurn:
    """Start Codex on the turn's brief; the process is running when this returns."""
    return CodexTurn(ctx)
