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
  a usage limit's `try again at <local time>` is its reset (hive/agents/resets.py),
  read in the zone Codex runs in (the turn's TZ, else the machine's), so the key rests
  until then;
- `turn.completed`: the usage, counted once, here. Codex reports the thread's total, so
  a resumed thread's earlier usage (read from its restored file) is taken off.

A conversation given in `ctx.resume` is restored where Codex looks for it (its home's
`sessions/`, under the date of the thread's start) and resumed with `exec resume <id>`;
one that cannot be restored starts fresh, with a sentence in the transcript (resuming.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hive.agents.base import TurnContext, TurnStartError
from hive.agents.protocol import Usage
from hive.agents.resets import try_again_reset
from hive.agents.resuming import ResumingTurn
from hive.rules.reported import token_count

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
# the machine's zone, which Codex prints its local times in when the turn has no TZ
LOCALTIME = Path("/etc/localtime")


@dataclass(frozen=True)
class Seen:
    """What one stream line told: transcript lines, and what the turn keeps. `total` is
    the thread's usage so far (`turn.completed`); `resets_at` goes with a refusal: when
    the provider said the key works again."""

    lines: tuple[str, ...] = ()
    thread_id: str | None = None
    refusal: str | None = None
    total: Usage | None = None
    resets_at: datetime | None = None


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


def read_line(text: str, now: datetime | None = None, zone: tzinfo | None = UTC) -> Seen:
    """One line of `codex exec --json` (see the module), read at `now` (default: the
    clock's) with Codex's local times in `zone` (None: unknown, so a local time is not
    read). A line that is not a JSON object is kept as it is."""
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
        refusal = refusal_of(message)
        resets_at = None
        if refusal is not None and zone is not None:
            resets_at = try_again_reset(message, now or datetime.now(UTC), zone)
        return Seen(lines=(f"turn failed: {message}",), refusal=refusal, resets_at=resets_at)
    if kind == "turn.completed":
        note = _ignored(event.get("usage"))
        lines = ("turn completed",) if note is None else (note, "turn completed")
        return Seen(lines=lines, total=_usage(event.get("usage")))
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
    return token_count(value) or 0


def _ignored(raw: Any) -> str | None:
    """A note naming the usage's counts that are no count (see hive/rules/reported.py)."""
    if not isinstance(raw, dict):
        return None
    bad = [
        f"usage.{name}={json.dumps(raw[name])[:40]}"
        for name in ("input_tokens", "output_tokens")
        if raw.get(name) is not None and token_count(raw[name]) is None
    ]
    return f"ignored, not a figure a turn can have: {', '.join(bad)}" if bad else None


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


def codex_zone(env: Mapping[str, str]) -> tzinfo | None:
    """The zone Codex prints its local times in: the turn's TZ when it names one, else
    the machine's (LOCALTIME; UTC without it); None when TZ is not a zone's name (a
    POSIX rule, a path)."""
    name = env.get("TZ")
    try:
        if name is not None:
            return ZoneInfo(name.removeprefix(":"))
        with LOCALTIME.open("rb") as local:
            return ZoneInfo.from_file(local)
    except FileNotFoundError:
        return UTC if name is None else None
    except (OSError, ValueError, ZoneInfoNotFoundError):
        return None


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


class CodexTurn(ResumingTurn):
    agent = AGENT
    read_line_max_bytes = STREAM_LINE_MAX_BYTES

    def __init__(self, ctx: TurnContext) -> None:
        self._earlier = Usage(provider=PROVIDER)
        self._zone: tzinfo | None = UTC
        super().__init__(ctx)

    def _command(self, resume_id: str | None) -> list[str]:
        argv = [
            self.ctx.launch.agent_bin or DEFAULT_BIN,
            "exec",
            "--json",
            "--color",
            "never",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
        ]
        if resume_id:
            argv += ["resume", resume_id]
        return [*argv, "-"]  # the brief, from stdin

    def _set_up(self, private_dir: Path, env: dict[str, str]) -> Path:
        home = private_dir / "codex"
        home.mkdir()
        base_url = env.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL
        (home / "config.toml").write_text(config_toml(base_url), encoding="utf-8")
        env["CODEX_HOME"] = str(home)
        env.pop(KEY_VARIABLE, None)
        if self.ctx.key:
            env[KEY_VARIABLE] = self.ctx.key
        self._zone = codex_zone(env)
        return home

    def _restore_path(self, home: Path, data: bytes, session_id: str) -> Path:
        return home / session_path(data, session_id)

    def _restored(self, data: bytes) -> None:
        self._earlier = earlier_total(data)

    def _session_file(self, home: Path, session_id: str) -> Path | None:
        found = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{session_id}.jsonl"))
        return found[-1] if found else None

    def _keeping(self, data: bytes) -> None:
        """Name the model the turn used."""
        model = last_model(data)
        with self._lock:
            if self._usage is not None and model:
                self._usage = replace(self._usage, model=model)

    def _stream_line(self, text: str) -> str | None:
        seen = read_line(text, zone=self._zone)
        if seen.thread_id:
            self._saw_session(seen.thread_id)
        if seen.refusal:
            self._saw_refusal(seen.refusal, seen.resets_at)
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


def start_codex(ctx: TurnContext) -> CodexTurn:
    """Start Codex on the turn's brief; the process is running when this returns."""
    return CodexTurn(ctx)
