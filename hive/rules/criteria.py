"""A review's judgement of the acceptance criteria (DESIGN 10): the reviewer prints one
line per criterion, and these lines are read here.

    HIVE-CRITERION: 2 met
    HIVE-CRITERION: 3 unmet: the file still says "hello"

Criteria count from 1. A later line about the same criterion replaces an earlier one; a
number outside 1..count and a line of any other form are ignored (and named, so the
review's note can say what was not understood).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from hive.rules.lifecycle import ReviewState
from hive.rules.reviewer import review_of
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ESCALATE,
    RELEASED,
    SENDBACK,
    STALE,
    VERDICT_ACCEPT,
    VERDICT_EMPTY,
    VERDICT_ESCALATE,
    VERDICT_SENDBACK,
    VERDICT_WAIT,
    WAIT,
)

MARK = "HIVE-CRITERION:"
# The heading under which a send-back's notes appear in the next attempt's brief (the
# demo agent looks for it too).
SENDBACK_HEADING = "The review sent the last attempt back:"
# How much of one unmet reason is kept for the next attempt's brief.
REASON_MAX_CHARS = 500
_LINE = re.compile(r"^HIVE-CRITERION:\s*([0-9]{1,4})\s+(met|unmet)\s*(?::\s*(.*))?$", re.I)


@dataclass(frozen=True)
class Judgement:
    """What a review said: how many criteria it judged and met, each unmet one's reason
    (criterion number, reason), and the criterion lines it could not read."""

    criteria: int
    judged: int
    met: int
    unmet: tuple[tuple[int, str], ...] = ()
    unread: tuple[str, ...] = ()


def judgement_of(lines: Iterable[str], criteria: int) -> Judgement:
    """Read the HIVE-CRITERION lines among `lines` for an issue with `criteria` criteria."""
    said: dict[int, tuple[bool, str]] = {}
    unread: list[str] = []
    for raw in lines:
        line = raw.strip()
        if not line.upper().startswith(MARK):
            continue
        match = _LINE.match(line)
        number = int(match.group(1)) if match else 0
        if match is None or not 1 <= number <= criteria:
            unread.append(line[:200])
            continue
        met = match.group(2).lower() == "met"
        reason = (match.group(3) or "").strip()[:REASON_MAX_CHARS]
        said[number] = (met, reason or "not met")
    unmet = tuple((n, reason) for n, (met, reason) in sorted(said.items()) if not met)
    return Judgement(
        criteria=criteria,
        judged=len(said),
        met=sum(1 for met, _ in said.values() if met),
        unmet=unmet,
        unread=tuple(unread),
    )


def notes_of(judgement: Judgement, texts: tuple[str, ...]) -> str:
    """The reviewer's notes for the next attempt's brief: each unmet criterion, quoted,
    with its reason (`texts` are the criteria, in order)."""
    lines = []
    for number, reason in judgement.unmet:
        text = texts[number - 1] if number <= len(texts) else f"criterion {number}"
        lines.append(f"- {text}: {reason}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Decision:
    """What a review decided: the verdict (a states.* value), its event, and the note."""

    verdict: int
    event: int
    note: str


def decide(
    judgement: Judgement, texts: tuple[str, ...], committed_files: int, sendbacks: int
) -> Decision:
    """The verdict of a review that ran to its end (`review_of`), with its note: the
    unmet criteria for a send-back, the reason for an escalation, what is missing for a
    wait."""
    verdict = review_of(
        judgement.criteria, judgement.judged, judgement.met, committed_files, sendbacks
    )
    if verdict == SENDBACK:
        note = notes_of(judgement, texts)
    elif verdict == WAIT:
        note = f"judged {judgement.judged} of {judgement.criteria} criteria"
    elif verdict == ACCEPT:
        note = f"all {judgement.criteria} criteria met"
    elif judgement.criteria == 0:
        note = "the issue has no acceptance criteria: a person decides"
    elif judgement.met >= judgement.criteria:
        note = "every criterion met, but no file was committed: a person decides"
    else:
        note = f"sent back {sendbacks} times and still unmet:\n" + notes_of(judgement, texts)
    return Decision(verdict, _EVENTS[verdict], note)


def empty_decision() -> Decision:
    """Finished work with no commit beyond base: nothing to judge (VERDICT_EMPTY)."""
    return Decision(EMPTY, VERDICT_EMPTY, "no commit beyond base: nothing to review")


_EVENTS = {
    ACCEPT: VERDICT_ACCEPT,
    SENDBACK: VERDICT_SENDBACK,
    ESCALATE: VERDICT_ESCALATE,
    WAIT: VERDICT_WAIT,
}


def carried_note(state: int, review_state: str | None, note: str | None) -> str:
    """The review's note the next attempt's brief carries under SENDBACK_HEADING: a
    send-back's, also once its floor released it (a release keeps only a send-back's
    note), and a stale order's (only a person's note on escalated work stays on a stale
    order: changed criteria clear the note they outdate); empty for any other state."""
    carried = state in (SENDBACK, STALE) or (
        state == RELEASED and review_state == ReviewState.RELEASED
    )
    return (note or "").strip() if carried else ""
