"""Agents among themselves (seed module 8): who a message calls, how deep a chain of bot
messages goes, and the clocks that keep the bots from flooding the room.

- Who is called: a bot named in a message. A person names a bot by its Matrix id
  (`@queen:hs`), by `@` and its display name (`@Queen`), by its display name opening the
  message (`Queen: ...`, `queen, ...`, what a client's completion writes), or by the
  message's `m.mentions`. A bot names another only by its Matrix id or `m.mentions`, so
  a sentence that says "the Queen" calls nobody.
- The chain: a person's message is depth 0; a bot's message answering a message of
  depth d is depth d + 1. A message calls bots only while its depth is below
  CHAIN_MAX_BOT_MESSAGES: the chain stops three bot messages after the last person's.
- The clocks: a bot sends at most one message every gap seconds; the room takes at most
  `per_minute` bot messages in any 60 s; what is owed to a person goes first, then the
  Queen's posts of moves, then bot-to-bot messages, oldest first within each. Nothing
  bot-to-bot goes while something owed to a person waits.
- What the clocks hold back waits in the outbox and is sent when they allow; a message
  held past its kind's bound is dropped (answers and moves after HOLD_MAX_SECONDS,
  bot-to-bot after CHAIN_HOLD_MAX_SECONDS), counted and logged, never sent late.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

CHAIN_MAX_BOT_MESSAGES = 3  # the card: a chain three bot messages deep
GAP_SECONDS_DEFAULT = 2.0  # HIVE_CHAT_GAP_SECONDS' default
ROOM_PER_MINUTE_DEFAULT = 20  # HIVE_CHAT_ROOM_PER_MINUTE's default
WINDOW_SECONDS = 60.0  # the room's cap counts the bot messages of the last minute
HOLD_MAX_SECONDS = 600.0  # an answer owed to a person, or a move, waits at most this long
CHAIN_HOLD_MAX_SECONDS = 60.0  # a bot-to-bot message waits at most this long
ISSUE_MAX = 2**31 - 1  # an issue number is a PostgreSQL integer
MESSAGE_MAX_CHARS = 4000  # a bot's message is cut to this (a room is no transcript)

_ISSUE_RE = re.compile(r"(?<![\w#&])#([0-9]{1,10})\b")
# a display name opening a message: what follows it is ':' or ','
_OPENING_SEPARATORS = (":", ",")


class Kind(IntEnum):
    """What a bot's message is, in the order the clocks let them go."""

    ANSWER = 0  # owed to a person who called the bot
    MOVE = 1  # the Queen posts a move (merged, sent back, escalated, a key resting, a cap)
    CHAIN = 2  # a bot answering another bot


@dataclass(frozen=True)
class Bot:
    """A bot in the room: its Matrix id and its display name (may be empty)."""

    user_id: str
    name: str = ""


def called(
    body: str,
    mentions: Iterable[str],
    bots: Sequence[Bot],
    *,
    by_person: bool,
    sender: str = "",
) -> tuple[str, ...]:
    """The Matrix ids of the bots `body` (with its `m.mentions` user ids) calls, in the
    order of `bots`; never the `sender` itself."""
    named = set(mentions)
    lowered = body.casefold()
    found = []
    for bot in bots:
        if bot.user_id == sender:
            continue
        by_name = by_person and bool(bot.name) and _names(lowered, bot.name.casefold())
        if bot.user_id in named or _has_id(lowered, bot.user_id.casefold()) or by_name:
            found.append(bot.user_id)
    return tuple(found)


def _has_id(lowered: str, user_id: str) -> bool:
    """True when `lowered` holds `user_id` whole (not the start of a longer id)."""
    return re.search(re.escape(user_id) + r"(?![\w.:-])", lowered) is not None


def _names(lowered: str, name: str) -> bool:
    """True when `lowered` opens with `name` and a separator, or holds `@name` as a word."""
    head = lowered.lstrip()
    if head.startswith(name) and head[len(name) : len(name) + 1] in _OPENING_SEPARATORS:
        return True
    # not the start of a longer name, nor of a Matrix id (`@queen:other.hs`)
    pattern = r"(?<![\w@])@" + re.escape(name) + r"(?![\w]|:\S)"
    return re.search(pattern, lowered) is not None


def issue_of(body: str) -> int | None:
    """The first issue a message names (`#12`), or None."""
    for match in _ISSUE_RE.finditer(body):
        number = int(match.group(1))
        if 1 <= number <= ISSUE_MAX:
            return number
    return None


def depth_of(by_person: bool, carried: int | None) -> int:
    """A message's depth in its chain: 0 for a person's; a bot's is the depth it carries
    (a bot message carrying none, or a nonsense one, counts as the chain's end)."""
    if by_person:
        return 0
    if carried is None or carried < 1:
        return CHAIN_MAX_BOT_MESSAGES
    return carried


def answer_depth(depth: int) -> int:
    """The depth of a bot's answer to a message of `depth`: one more."""
    return depth + 1


def calls_further(depth: int) -> bool:
    """True when a message of `depth` may call a bot: below three bot messages."""
    return depth < CHAIN_MAX_BOT_MESSAGES


def kind_of(trigger_by_person: bool) -> Kind:
    """An answer to a person's message is owed to the person; to a bot's, a chain's."""
    return Kind.ANSWER if trigger_by_person else Kind.CHAIN


def hold_max_seconds(kind: Kind) -> float:
    return CHAIN_HOLD_MAX_SECONDS if kind == Kind.CHAIN else HOLD_MAX_SECONDS


def expired(kind: Kind, waited_seconds: float) -> bool:
    """True when a message held this long is dropped rather than sent late."""
    return waited_seconds >= hold_max_seconds(kind)


def one_line(text: str, max_chars: int = MESSAGE_MAX_CHARS) -> str:
    """A message body within its bound (a longer one is cut and says so)."""
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 1] + "…"


@dataclass(frozen=True)
class Pending:
    """A message waiting in the outbox: its row, bot, kind and since when (seconds)."""

    id: int
    bot: str
    kind: Kind
    since: float


@dataclass(frozen=True)
class Clocks:
    gap_seconds: float = GAP_SECONDS_DEFAULT
    per_minute: int = ROOM_PER_MINUTE_DEFAULT


@dataclass(frozen=True)
class Turn:
    """The clocks' answer: the row to send now (None: none), the rows to drop (held past
    their bound) and, when nothing goes now, the seconds until something may."""

    send: Pending | None
    drop: tuple[Pending, ...]
    wait_seconds: float


def next_turn(
    pending: Sequence[Pending],
    now: float,
    last_sent: dict[str, float],
    room_sent: Sequence[float],
    clocks: Clocks,
) -> Turn:
    """What goes next. `last_sent` is each bot's last send; `room_sent` the times of the
    room's bot messages (any age: those older than a minute do not count)."""
    drop = tuple(p for p in pending if expired(p.kind, now - p.since))
    live = sorted((p for p in pending if p not in drop), key=lambda p: (p.kind, p.since, p.id))
    if not live:
        return Turn(None, drop, 0.0)
    recent = sorted(t for t in room_sent if now - t < WINDOW_SECONDS)
    room_wait = 0.0
    if len(recent) >= clocks.per_minute:
        room_wait = recent[len(recent) - clocks.per_minute] + WINDOW_SECONDS - now
    person_waits = live[0].kind == Kind.ANSWER
    waits = []
    for p in live:
        if person_waits and p.kind == Kind.CHAIN:
            break
        last = last_sent.get(p.bot)
        gap_wait = 0.0 if last is None else last + clocks.gap_seconds - now
        wait = max(gap_wait, room_wait)
        if wait <= 0:
            return Turn(p, drop, 0.0)
        waits.append(wait)
    return Turn(None, drop, min(waits))
