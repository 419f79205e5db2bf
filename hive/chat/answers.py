"""What the Queen, the reviewer and the shaper answer in the room, read from the store
through the services `hive why`, `hive status` and the board use.

- The Queen: an issue named (`#12`): where its work stands and her latest sentences
  about it; none named: what runs, what waits for review, and what waits to start and
  why (the latest sentence about each).
- The reviewer: an issue's verdict and note, or, none named, what waits for a review.
- The shaper: its proposal for the issue and its note.
Each answer is one message of a few short lines; an unknown issue is said plainly. An
answer may hand off to another bot (the Queen to the reviewer for work it judged or will
judge, the reviewer to the Queen for accepted work, which she merges): the room then
reads that bot's Matrix id in it, which calls it (a chain, hive.rules.chat).
"""

from __future__ import annotations

from dataclasses import dataclass

from hive.chat.config import QUEEN, REVIEWER
from hive.rules.board import Column
from hive.rules.chat import one_line
from hive.rules.lifecycle import ReviewState
from hive.rules.text import shown
from hive.services import board, history
from hive.services.standing import UnknownIssue, standing
from hive.store import people, shapes
from hive.store.db import Db

SENTENCES_SHOWN = 3  # the Queen's latest sentences about an issue an answer quotes
ISSUES_SHOWN = 8  # issues an answer lists per column before "and N more"
NO_ISSUE = "Name an issue (#12) and I say"


@dataclass(frozen=True)
class Answer:
    text: str
    hand_off: str | None = None  # the name of the bot this answer calls


def queen(db: Db, issue: int | None) -> Answer:
    if issue is None:
        return Answer(_overview(db))
    facts = people.facts(db, issue)
    if facts is None:
        return Answer(f"I know no issue #{issue}.")
    lines = [f"{standing(facts)} ({shown(facts.title)})."]
    try:
        said = history.why(db, issue, limit=SENTENCES_SHOWN)
    except UnknownIssue:
        said = []
    for sentence in said:
        lines.append(f"{sentence.at:%H:%M}Z {shown(sentence.text)}")
    if not said:
        lines.append("Nothing is said about it yet.")
    judged = facts.review_state is not None or facts.finished_at is not None
    return Answer(one_line("\n".join(lines)), REVIEWER if judged else None)


def _overview(db: Db) -> str:
    cards = board.cards(db).cards
    running = [c for c in cards if c.column == Column.RUNNING]
    review = [c for c in cards if c.column == Column.REVIEW]
    waiting = [c for c in cards if c.column in (Column.BACKLOG, Column.BLOCKED)]
    lines = [
        _listed("Running", [f"#{c.number}" for c in running]),
        _listed("Waiting for review", [f"#{c.number}" for c in review]),
    ]
    why_waits = []
    for card in waiting[:ISSUES_SHOWN]:
        if card.blockers:
            reason = "blocked by " + ", ".join(f"#{b}" for b in card.blockers)
        else:
            said = history.why(db, card.number, limit=1)
            reason = shown(said[0].text) if said else "not looked at yet"
        why_waits.append(f"#{card.number}: {reason}")
    more = len(waiting) - ISSUES_SHOWN
    lines.append("Waiting to start: " + ("; ".join(why_waits) or "nothing"))
    if more > 0:
        lines[-1] += f"; and {more} more"
    return one_line("\n".join(lines))


def _listed(what: str, numbers: list[str]) -> str:
    shown_ = ", ".join(numbers[:ISSUES_SHOWN]) or "nothing"
    more = len(numbers) - ISSUES_SHOWN
    return f"{what}: {shown_}" + (f" and {more} more" if more > 0 else "")


def reviewer(db: Db, issue: int | None) -> Answer:
    if issue is None:
        review = [f"#{c.number}" for c in board.cards(db).cards if c.column == Column.REVIEW]
        return Answer(_listed(f"{NO_ISSUE} my verdict. Waiting for review", review))
    facts = people.facts(db, issue)
    if facts is None:
        return Answer(f"I know no issue #{issue}.")
    if facts.review_state is None:
        return Answer(f"I have not judged #{issue} yet: {standing(facts)}.")
    note = shown(facts.review_note or "no note")
    sendbacks = f", {facts.sendbacks} send-back(s) so far" if facts.sendbacks else ""
    text = f"#{issue}, attempt {facts.attempt}: {facts.review_state}{sendbacks}. {note}"
    return Answer(one_line(text), QUEEN if facts.review_state == ReviewState.ACCEPT else None)


def shaper(db: Db, issue: int | None) -> Answer:
    if issue is None:
        return Answer(f"{NO_ISSUE} what I proposed for it.")
    shape = shapes.get(db, issue)
    if shape is None:
        return Answer(f"I proposed nothing for #{issue}.")
    boundary = ", ".join(shape.boundary) or "no boundary"
    return Answer(one_line(f"#{issue}: {shape.state}, boundary {boundary}. {shown(shape.note)}"))
