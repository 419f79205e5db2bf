"""A command turn whose agent keeps its conversation in a session file (claude, codex).

The adapter says what is its own: the command (`_command`, with or without the session
to resume), the agent's private home and environment (`_set_up`), where the agent looks
for a session's file (`_restore_path`) and where it left one (`_session_file`), and how
to read the agent's stream (`_stream_line`), which names the session (`_saw_session`).
This base does the rest:

- before the start, the conversation given in `ctx.resume` (when it is this agent's) is
  written where the agent looks for it, and the command resumes it; one that cannot be
  restored (not kept, empty, not that session, not writable) starts fresh, with the
  reason in the transcript as soon as the agent speaks;
- after the agent exited, the session file it left becomes the turn's `conversation`
  (capped at CONVERSATION_MAX_BYTES, without the key), with a sentence in the
  transcript when there is none to keep.
"""

from __future__ import annotations

from pathlib import Path

from hive.agents.base import TurnContext
from hive.agents.command import CommandTurn
from hive.agents.conversation import (
    CONVERSATION_MAX_BYTES,
    Conversation,
    not_kept,
    restorable,
    without_key,
)


class ResumingTurn(CommandTurn):
    agent = ""  # HIVE_AGENT's value, and the agent a carried conversation names

    def __init__(self, ctx: TurnContext) -> None:
        resume = ctx.resume if ctx.resume and ctx.resume.agent == self.agent else None
        self._resume = resume
        self._session_id: str | None = None  # as the agent's stream reported it
        self._home: Path | None = None
        self._resumed = False
        self._fresh: str | None = None  # why an earlier conversation was not resumed
        self._argv: list[str] = []  # the process starts with this list, filled in _prepare
        super().__init__(ctx, "", argv=self._argv)

    # ---- what an adapter says ------------------------------------------------------

    def _command(self, resume_id: str | None) -> list[str]:
        """The agent's argv, resuming the session `resume_id` (None: a fresh one)."""
        raise NotImplementedError

    def _set_up(self, private_dir: Path, env: dict[str, str]) -> Path:
        """Before the start: make the agent's home under `private_dir`, fill in `env`;
        answer the home."""
        raise NotImplementedError

    def _restore_path(self, home: Path, data: bytes, session_id: str) -> Path:
        """Where the agent looks for the session `session_id` whose file is `data`.
        Raises ValueError when `data` is not that session's file."""
        raise NotImplementedError

    def _session_file(self, home: Path, session_id: str) -> Path | None:
        """Where the agent left the session `session_id` (None: nowhere)."""
        raise NotImplementedError

    def _stream_line(self, text: str) -> str | None:
        """One line of the agent's stream; answer what the transcript keeps."""
        return text

    def _restored(self, data: bytes) -> None:
        """The earlier session's file `data` was restored."""

    def _keeping(self, data: bytes) -> None:
        """The session's file `data` (not yet without the key) is about to be kept."""

    def _saw_session(self, session_id: str) -> None:
        """The agent's stream named its session."""
        self._session_id = session_id

    # ---- the shared part -------------------------------------------------------------

    def _prepare(self, private_dir: Path, env: dict[str, str]) -> None:
        home = self._home = self._set_up(private_dir, env)
        resume, resume_id = self._resume, None
        if resume is not None:
            try:
                data = restorable(resume)
                where = self._restore_path(home, data, resume.session_id)
                where.parent.mkdir(parents=True)
                where.write_bytes(data)
                self._restored(data)
                self._resumed, resume_id = True, resume.session_id
            except (OSError, ValueError) as exc:
                self._fresh = f"the earlier conversation was not restored ({exc}): starting fresh"
        self._argv[:] = self._command(resume_id)

    def _stdout(self, text: str) -> str | None:
        if self._fresh is not None:
            fresh, self._fresh = self._fresh, None
            self.transcript.note(fresh)
        return self._stream_line(text)

    def _before_cleanup(self) -> None:
        """Keep the session's file for the next attempt (capped, without the key)."""
        session_id = self._session_id
        if session_id is None and self._resumed:
            self.transcript.note(
                "the CLI could not resume the earlier conversation: the next attempt starts fresh"
            )
        if session_id is None or self._home is None:
            return
        path = self._session_file(self._home, session_id)
        try:
            size = path.stat().st_size if path is not None else None
        except OSError:
            size = None
        if path is None or size is None:
            self.transcript.note("the CLI left no session file: the next attempt starts fresh")
            return
        if size > CONVERSATION_MAX_BYTES:
            why = f"the session file ({size} bytes) was over {CONVERSATION_MAX_BYTES}"
            self.transcript.note(f"{why}: not kept")
            self.conversation = not_kept(self.agent, session_id, why)
            return
        data = path.read_bytes()
        self._keeping(data)
        self.conversation = Conversation(self.agent, session_id, without_key(data, self.ctx.key))
