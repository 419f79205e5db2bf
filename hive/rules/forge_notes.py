"""The night watch's comments on an issue (DESIGN 10): one of a kind per issue, marked,
and edited only when its text changed. Pure."""

from __future__ import annotations

from enum import StrEnum


class Note(StrEnum):
    """What the Queen keeps on GitHub, one of each kind per subject: the comments on an
    issue (edited, never repeated), and two records that are no comment."""

    UNSHAPED = "unshaped"
    ESCALATED = "escalated"
    NO_CREDIT = "no credit"  # its account holds no token (HIVE_CREDITS=on)
    MERGED = "merged"
    BASE_RED = "base red"  # no comment: the issue opened about a check red on the base
    BASE_GREEN = "base green"  # on that issue, as the check passes again and it closes
    CLOSED = "closed"  # no comment: the merge (its sha) the issue was closed for
    SHAPE = "shape"  # the shaper's word on the issue: its proposal, applied or refused


MARKER = "<!-- hive:{kind} -->"


def note_body(kind: Note, text: str) -> str:
    """The comment's text with its hidden marker (how the watch finds its own comment)."""
    return f"{text}\n\n{MARKER.format(kind=kind.value)}"


class NoteAction(StrEnum):
    """What the watch does to its comment of a kind."""

    CREATE = "create"
    EDIT = "edit"
    NONE = "none"


def note_action(existing_body: str | None, wanted_body: str) -> NoteAction:
    """CREATE when there is no comment yet, EDIT when it says something else now, NONE
    when it already says this (the watch never repeats itself)."""
    if existing_body is None:
        return NoteAction.CREATE
    return NoteAction.NONE if existing_body == wanted_body else NoteAction.EDIT
