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
  `hive.rules.keys.sort_refusal`; its usage is not counted (it is repeated per line).
  An account's usage limit (`api_error` `usage_limit_reached`, under the word
  rate_limit), the API's spend limit of a key, and Claude Code 1.x's usage-limit text
  are a `quota` refusal instead, with the reset they name (hive/agents/resets.py), so
  the key rests until then;
- `result`: the turn's usage and cost (counted once, here), and an error status when a
  refused request ended it (a 429 ends with `is_error` inside a `success` result).

A conversation given in `ctx.resume` is restored where this CLI looks for it (its
config directory, under the worktree's path) and resumed with `--resume`; one that
cannot be restored starts fresh, with a sentence in the transcript (resuming.py).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from hive.agents.base import TurnContext
from hive.agents.protocol import Refusal, Usage, refusal_kind
from hive.agents.resets import QUOTA, epoch_reset, spend_limit_refusal, usage_limit_refusal
from hive.agents.resuming import ResumingTurn
from hive.rules.reported import TURN_TOKENS_MAX, reported_name, token_count
from hive.rules.reported import cost_usd as reported_cost

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
# Claude Code's `api_error` for a refusal by the account's own usage limit
USAGE_LIMIT_REACHED = "usage_limit_reached"
# the result's usage fields that count as input
_INPUT_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass(frozen=True)
class Seen:
    """What one stream line told: transcript lines, and what the turn keeps. `resets_at`
    goes with a refusal: when the provider said the key works again."""

    lines: tuple[str, ...] = ()
    session_id: str | None = None
    refusal: str | None = None
    usage: Usage | None = None
    resets_at: datetime | None = None


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
        texts = [b.get("text") for b in message.get("content") or () if isinstance(b, dict)]
        refusal = _refused(event, event.get("error") or event.get("api_error_status"), texts)
    if refusal is None:
        return Seen(lines=tuple(lines))
    return Seen(lines=tuple(lines), refusal=refusal.kind, resets_at=refusal.resets_at)


def _result(event: dict[str, Any]) -> Seen:
    usage = event.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    model_usage = event.get("modelUsage")
    models = list(model_usage) if isinstance(model_usage, dict) else []
    ignored: list[str] = []
    counts = {}
    for name in (*_INPUT_FIELDS, "output_tokens"):
        value = usage.get(name) or 0
        counts[name] = token_count(value)
        if counts[name] is None:
            ignored.append(f"usage.{name}={_shown(value)}")
    cost = event.get("total_cost_usd")
    cost_usd = None if cost is None else reported_cost(cost)
    if cost is not None and cost_usd is None:
        ignored.append(f"total_cost_usd={_shown(cost)}")
    spent = Usage(
        provider=PROVIDER,
        model=reported_name(models[-1]) if models else None,
        input_tokens=min(TURN_TOKENS_MAX, sum(counts[name] or 0 for name in _INPUT_FIELDS)),
        output_tokens=counts["output_tokens"] or 0,
        cost_usd=cost_usd,
    )
    refusal = None
    if event.get("is_error"):
        refusal = _refused(event, event.get("api_error_status"), [event.get("result")])
    denied = event.get("permission_denials")
    denied = denied if isinstance(denied, list) else ()
    lines = [f"result: {event.get('subtype')}{' (error)' if event.get('is_error') else ''}"]
    if denied:
        lines.append(f"{len(denied)} tool calls were refused by the CLI's permissions")
    if ignored:
        lines.insert(0, f"ignored, not a figure a turn can have: {', '.join(ignored)}")
    return Seen(
        lines=tuple(lines),
        usage=spent,
        refusal=refusal.kind if refusal else None,
        resets_at=refusal.resets_at if refusal else None,
    )


def _shown(value: Any) -> str:
    """A JSON value as a note shows it, cut short."""
    return json.dumps(value, ensure_ascii=False)[:40]


def _refused(event: dict[str, Any], word: Any, texts: list[Any]) -> Refusal | None:
    """The refusal an error line reports: a quota with its reset when the line names an
    account's usage limit or a key's spend limit, else its `word` (None: no refusal)."""
    if event.get("api_error") == USAGE_LIMIT_REACHED:
        params = event.get("api_error_params")
        info = params.get("rate_limit_info") if isinstance(params, dict) else None
        resets = info.get("resetsAt") if isinstance(info, dict) else None
        return Refusal(QUOTA, epoch_reset(resets))
    for text in texts:
        if isinstance(text, str):
            refusal = usage_limit_refusal(text) or spend_limit_refusal(text)
            if refusal is not None:
                return refusal
    kind = _kind(word)
    return Refusal(kind) if kind else None


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


class ClaudeTurn(ResumingTurn):
    agent = AGENT
    read_line_max_bytes = STREAM_LINE_MAX_BYTES

    def _command(self, resume_id: str | None) -> list[str]:
        argv = [
            self.ctx.launch.agent_bin or DEFAULT_BIN,
            "-p",
            self.ctx.brief,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
        ]
        return [*argv, "--resume", resume_id] if resume_id else argv

    def _set_up(self, private_dir: Path, env: dict[str, str]) -> Path:
        config = private_dir / "claude"
        config.mkdir()
        env["CLAUDE_CONFIG_DIR"] = str(config)
        env["CLAUDE_CODE_MAX_RETRIES"] = str(MAX_RETRIES)
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        if os.geteuid() == 0 and not self.ctx.launch.user:
            env["IS_SANDBOX"] = "1"  # root: the bypass flag is refused unless told so
        if self.ctx.key:
            env[KEY_VARIABLE] = self.ctx.key
        return config

    def _restore_path(self, home: Path, data: bytes, session_id: str) -> Path:
        return self._session_file(home, session_id)

    def _session_file(self, home: Path, session_id: str) -> Path:
        return project_dir(home, self.ctx.worktree) / f"{session_id}.jsonl"

    def _stream_line(self, text: str) -> str | None:
        seen = read_line(text)
        if seen.session_id:
            self._saw_session(seen.session_id)
        # the result's bare status only when no message named the refusal's kind
        if seen.refusal and (seen.usage is None or self.refusal is None):
            self._saw_refusal(seen.refusal, seen.resets_at)
        if seen.usage:
            self._saw_usage(seen.usage)
        for line in seen.lines[:-1]:
            self.transcript.line("stdout", line)
        return seen.lines[-1] if seen.lines else None


def start_claude(ctx: TurnContext) -> ClaudeTurn:
    """Start Claude Code on the turn's brief; the process is running when this returns."""
    return ClaudeTurn(ctx)
