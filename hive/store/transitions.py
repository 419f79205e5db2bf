"""Moving an order by an event (RULES 4), held to the table at the writer.

Every statement that moves an order names its event. It lands only from the states
that `hive.rules.lifecycle.sources(event)` allows; the SQL side reads the state with
`hive.order_state`. When it does not land, `move` says why. Either the attempt is no
longer the current one, which is no error: it was fenced out and the row went on
without it. Or the move is ILLEGAL from the state the row is in. That is logged with
both states and returned. The caller counts it (`hive_illegal_transitions_total`) or
refuses it to a person.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from hive.rules.lifecycle import sources
from hive.rules.states import Event, State, next_state
from hive.store.db import Db, connection
from hive.store.sql import q

log = logging.getLogger("hive.store")


@dataclass(frozen=True)
class Move:
    """What a move did. It `landed`, or it did not. It did not land when the attempt is
    gone (`current_state` None), or when `event` is illegal from `current_state`."""

    issue: int
    event: int
    landed: bool
    current_state: int | None = None

    @property
    def illegal(self) -> bool:
        return not self.landed and self.current_state is not None

    def __bool__(self) -> bool:
        """True when the move landed."""
        return self.landed


def move(
    db: Db,
    query: str,
    params: Mapping[str, Any],
    *,
    issue: int,
    conversation_id: uuid.UUID,
    event: int,
) -> Move:
    """Run the named moving `query` with `params` plus `from_states`. See `Move`."""
    allowed = list(sources(event))
    with connection(db) as conn:
        landed = conn.execute(q(query), {**params, "from_states": allowed}).fetchone()
        if landed is not None:
            return Move(issue, event, True)
        return missed(conn, issue, conversation_id, event)


def missed(
    conn: psycopg.Connection[Any], issue: int, conversation_id: uuid.UUID, event: int
) -> Move:
    """The move of `event` that did not land on the attempt (`issue`, `conversation_id`),
    and why, read from the row now. Either the attempt is gone or moved on meanwhile, so
    it is not this writer's. Or the move was refused from the state it is in."""
    row = (
        conn.cursor(row_factory=dict_row)
        .execute(q("order_state_now"), {"issue": issue, "conversation_id": conversation_id})
        .fetchone()
    )
    if row is None or int(row["state"]) in sources(event):
        return Move(issue, event, False)  # gone, or moved on meanwhile: not this writer's
    return refused(issue, event, int(row["state"]))


def refused(issue: int, event: int, state: int) -> Move:
    """Log that `event` was refused to `issue`'s order in `state`, naming both, as the
    move that did not land. The caller counts it."""
    log.warning(
        "illegal transition refused: event %s from state %s (the table says %s)",
        _name(Event, event),
        _name(State, state),
        next_state(state, event).name,
        extra={"issue": issue},
    )
    return Move(issue, event, False, current_state=state)


def _name(kind: type[State] | type[Event], value: int) -> str:
    try:
        return kind(value).name
    except ValueError:
        return str(value)
