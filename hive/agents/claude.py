"""`claude`: Claude Code headless, as a command turn (command.py) reading its stream.

It runs `claude -p <brief> --output-format stream-json --verbose` with the permission
bypass (the turn's boundary is the hive's; as root Claude Code needs to be told it is
sandboxed, IS_SANDBOX=1), in the worktree, in its own process group, with the key in
ANTHROPIC_API_KEY, its config directory (CLAUDE_CONFIG_DIR) private to the turn, and its
own retries of a refused request bounded (CLAUDE_CODE_MAX_RETRIES; it retries 10 times
over minutes by default). `HIVE_AGENT_BIN` names the executable (default: `claude`).

The stream, one JSON object a line, read as it comes (`read_line`):
- `system`/`init`: the session id, kept as the conversation carried to the next attempt;
- `system`/`api_retry`: a note (the CLI retries by itself);
- `assistant`: its text and tool calls go to the transcript; a message the CLI made up
  for a refused request (`is_api_error_message`) reports its `error` word (rate_limit,
  billing_error, authentication_failed, ...) as the refusal, sorted by
  `hive.rules.keys.sort_refusal`; its usage is not counted (it is repeated per line);
- `result`: the turn's usage and cost (counted once, here), and an error status when a
  refused request ended it (a 429 ends with `is_error` inside a `success` result).

A conversation given in `ctx.resume` is restored where this CLI looks for it (its
config directory, under the worktree's path) and resumed with `--resume`; one that
cannot be restored starts fresh, with a sentence in the transcript.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hive.agents.base import TurnContext
from hive.agents.command import CommandTurn
from hive.agents.conversation import (
    CONVERSATION_MAX_BYTES,
    Conversation,
    not_kept,
    restorable,
    without_key,
)
from hive.agents.protocol import Usage, refusal_kind

AGENT = "claude"
DEFAULT_BIN = "claude"
KEY_VARIABLE = "ANTHROPIC_API_KEY"
# Claude Code's own retries of a refused request; the key's rest is the hive's business
MAX_RETRIES = 2
# a stream line is parsed whole up to this size (the init line alone is several KiB)
STREAM_LINE_MAX_BYTES = 4 * 1024 * 1024
PROVIDER = "anthropic"
# Claude Code cuts a project's folder name (the worktree's path) to this many characters
PROJECT_NAME_MAX_CHARS = 200
_SESSION_ID = re.compile(r"^[A-Za-z0-9-]{1,64}$")


@dataclass(frozen=True)
class Seen:
    """What one stream line told: transcript lines, and what the turn keeps."""

    lines: tuple[str, ...] = ()
    session_id: str | None = None
    refusal: str | None = None
    usage: Usage | None = None


def read_line(text: str) -> Seen:
    """One line of Claude Code's stream-json output (see the module). A line that is not
    a JSON object is kept as it is."""
    try:
        event = json.loads(text)
    except ValueError:
        return Seen(lines=(text,))
    if not isinstance(event, dict):
        return Seen(lines=(text,))
    kind, subtype = event.get("type"), event.get("subtype")
    if kind == "system" and subtype == "init":
        return Seen(
            lines=(f"session {event.get('session_id')} ({event.get('model')})",),
            session_id=_session_id(event.get("session_id")),
        )
    if kind == "system" and subtype == "api_retry":
        return Seen(
            lines=(
                f"the API refused ({event.get('error_status')} {event.get('error')}); "
                f"retry {event.get('attempt')} of {event.get('max_retries')}",
            )
        )
    if kind == "assistant":
        return _assistant(event)
    if kind == "result":
        return _result(event)
    return Seen()


def _session_id(value: Any) -> str | None:
    return value if isinstance(value, str) and _SESSION_ID.match(value) else None


def _assistant(event: dict[str, Any]) -> Seen:
    message = event.get("message") or {}
    lines: list[str] = []
    for block in message.get("content") or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            lines.extend(f"assistant: {line}" for line in str(block["text"]).splitlines())
        elif block.get("type") == "tool_use":
            summary = json.dumps(block.get("input"), ensure_ascii=False)[:200]
            lines.append(f"tool {block.get('name')}: {summary}")
    refusal = None
    if event.get("is_api_error_message") or event.get("error"):
        refusal = _kind(event.get("error") or event.get("api_error_status"))
    return Seen(lines=tuple(lines), refusal=refusal)


def _result(event: dict[str, Any]) -> Seen:
    usage = event.get("usage") or {}
    models = list((event.get("modelUsage") or {}).keys())
    tokens_in = sum(
        int(usage.get(name) or 0)
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    cost = event.get("total_cost_usd")
    spent = Usage(
        provider=PROVIDER,
        model=models[-1] if models else None,
        input_tokens=tokens_in,
        output_tokens=int(usage.get("output_tokens") or 0),
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )
    refusal = None
    if event.get("is_error") and event.get("api_error_status"):
        refusal = _kind(event.get("api_error_status"))
    denied = event.get("permission_denials") or ()
    lines = [f"result: {event.get('subtype')}{' (error)' if event.get('is_error') else ''}"]
    if denied:
        lines.append(f"{len(denied)} tool calls were refused by the CLI's permissions")
    return Seen(lines=tuple(lines), usage=spent, refusal=refusal)


def _kind(word: Any) -> str | None:
    try:
        return refusal_kind(str(word)) if word not in (None, "") else None
    except ValueError:
        return None


def project_dir(config_dir: Path, worktree: Path) -> Path:
    """Where Claude Code keeps the sessions of `worktree`: its path with every
    character but a letter or digit made `-`; past PROJECT_NAME_MAX_CHARS, cut there and
    followed by `-` and the path's hash (`path_hash`)."""
    name = re.sub(r"[^A-Za-z0-9]", "-", str(worktree))
    if len(name) > PROJECT_NAME_MAX_CHARS:
        name = f"{name[:PROJECT_NAME_MAX_CHARS]}-{path_hash(str(worktree))}"
    return config_dir / "projects" / name


def path_hash(text: str) -> str:
    """Claude Code's hash of a long path: 31 * h + each UTF-16 unit, in 32 signed bits,
    its absolute value in base 36."""
    value = 0
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    value = abs(value - (1 << 32) if value >= 1 << 31 else value)
    digits = ""
    while value:
        value, digit = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
    return digits or "0"


class ClaudeTurn(CommandTurn):
    read_line_max_bytes = STREAM_LINE_MAX_BYTES

    def __init__(self, ctx: TurnContext) -> None:
        self._session_id: str | None = None
        self._config_dir: Path | None = None
        self._resumed: str | None = None
        binary = ctx.launch.agent_bin or DEFAULT_BIN
        argv = [
            binary,
            "-p",
            ctx.brief,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
        ]
        resume = ctx.resume if ctx.resume and ctx.resume.agent == AGENT else None
        self._resume = resume
        self._fresh: str | None = None  # why an earlier conversation was not resumed
        if resume is not None:
            argv += ["--resume", resume.session_id]
        self._argv = argv
        super().__init__(ctx, "", argv=argv)

    def _prepare(self, private_dir: Path, env: dict[str, str]) -> None:
        config = private_dir / "claude"
        config.mkdir()
        self._config_dir = config
        env["CLAUDE_CONFIG_DIR"] = str(config)
        env["CLAUDE_CODE_MAX_RETRIES"] = str(MAX_RETRIES)
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        if os.geteuid() == 0 and not self.ctx.launch.user:
            env["IS_SANDBOX"] = "1"  # root: the bypass flag is refused unless told so
        if self.ctx.key:
            env[KEY_VARIABLE] = self.ctx.key
        if self._resume is not None:
            try:
                data = restorable(self._resume)
                where = project_dir(config, self.ctx.worktree)
                where.mkdir(parents=True)
                (where / f"{self._resume.session_id}.jsonl").write_bytes(data)
                self._resumed = self._resume.session_id
            except (OSError, ValueError) as exc:
                del self._argv[-2:]  # no --resume: a fresh conversation
                self._fresh = f"the earlier conversation was not restored ({exc}): starting fresh"

    def _stdout(self, text: str) -> str | None:
        if self._fresh is not None:
            fresh, self._fresh = self._fresh, None
            self.transcript.note(fresh)
        seen = read_line(text)
        if seen.session_id:
            self._session_id = seen.session_id
        # the result's bare status only when no message named the refusal's kind
        if seen.refusal and (seen.usage is None or self.refusal is None):
            self._saw_refusal(seen.refusal)
        if seen.usage:
            self._saw_usage(seen.usage)
        for line in seen.lines[:-1]:
            self.transcript.line("stdout", line)
        return seen.lines[-1] if seen.lines else None

    def _before_cleanup(self) -> None:
        """Keep the session's file for the next attempt (capped, without the key)."""
        if self._session_id is None and self._resumed is not None:
            self.transcript.note(
                "the CLI could not resume the earlier conversation: the next attempt starts fresh"
            )
        if self._session_id is None or self._config_dir is None:
            return
        path = project_dir(self._config_dir, self.ctx.worktree) / f"{self._session_id}.jsonl"
        try:
            size = path.stat().st_size
        except OSError:
            self.transcript.note("the CLI left no session file: the next attempt starts fresh")
            return
        if size > CONVERSATION_MAX_BYTES:
            why = f"the session file ({size} bytes) was over {CONVERSATION_MAX_BYTES}"
            self.transcript.note(f"{why}: not kept")
            self.conversation = not_kept(AGENT, self._session_id, why)
            return
        data = without_key(path.read_bytes(), self.ctx.key)
        self.conversation = Conversation(AGENT, self._session_id, data)


def start_claude(ctx: TurnContext) -> ClaudeTurn:
    """Start Claude Code on the turn's brief; the process is running when this returns."""
    return ClaudeTurn(ctx)
