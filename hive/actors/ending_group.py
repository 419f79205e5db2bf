"""A runner's group commit of its bees' endings.

An ending that comes while none is being written is written at once, alone, as it
always was (`write_ending`). That write is retried while the store is away, then tried
in plainer forms.

Endings that come while one is being written wait. The next statement writes as many of
them together as `hive.rules.ending_batches` allows (`hive.store.endings.end_many`).
Each lands or not by its own fence. Each carries its bundle, conversation, key rest and
NOTIFY, and its sale goes in the same transaction. So a runner whose slots end near the
same moment pays one statement, not one each.

A statement of several that fails for any reason hands each of its endings back to its
own bee. The bee writes it alone. So every ending keeps the path that one ending has.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

from psycopg_pool import ConnectionPool

from hive.actors.bee.ending import write_ending
from hive.rules.ending_batches import ENDING_BYTES_A_STATEMENT, ENDINGS_A_STATEMENT, next_batch
from hive.rules.text import shown
from hive.store import credits
from hive.store.credits import Moved
from hive.store.db import connection
from hive.store.endings import OrderEnding, end_many, waiting
from hive.store.transitions import Move

log = logging.getLogger("hive.bee")

Written = tuple[Move, Moved | None]
STATEMENTS_KEPT = 64


@dataclass(eq=False)
class _Waiting:
    """An ending waiting for its statement. Once `done`, it says what came of it: it was
    `written`, or handed back to be written `alone`."""

    ending: OrderEnding
    sells: bool
    written: Written | None = None
    alone: bool = False
    done: bool = False


class EndingGroup:
    """The process's group commit; there is one per process. `close_order` calls `write`
    from each bee's thread. `statements` holds how many endings each of the latest
    statements of several wrote. It keeps the last STATEMENTS_KEPT, for tests and the
    log, since a runner lives for weeks."""

    def __init__(
        self,
        db: ConnectionPool[Any],
        most: int = ENDINGS_A_STATEMENT,
        most_bytes: int = ENDING_BYTES_A_STATEMENT,
    ) -> None:
        self._db = db
        self._most, self._most_bytes = most, most_bytes
        self._turn = threading.Condition()
        self._waiting: list[_Waiting] = []
        self._writing = False
        self.statements: deque[int] = deque(maxlen=STATEMENTS_KEPT)

    @property
    def waiting(self) -> int:
        """The endings waiting for a statement now."""
        with self._turn:
            return len(self._waiting)

    def write(self, ending: OrderEnding, sells: bool = False) -> Written:
        """Write `ending`, alone or with the endings that wait beside it, and sell its turn
        when `sells`. It answers as `write_ending` does and raises what it raises."""
        mine = _Waiting(ending, sells)
        with self._turn:
            self._waiting.append(mine)
            while self._writing and not mine.done:
                self._turn.wait()
            leads = not mine.done
            self._writing = self._writing or leads
        if leads:
            try:
                while not mine.done:
                    self._write_next(mine)
            finally:
                with self._turn:
                    self._writing = False
                    self._turn.notify_all()
        if mine.written is not None:
            return mine.written
        return write_ending(self._db, ending, sells)  # handed back: alone

    def _write_next(self, mine: _Waiting) -> None:
        """Write the next statement's endings. The leader's own ending alone is written as
        one ending is. Several are written together. A lone ending of another bee is
        handed back to that bee."""
        with self._turn:
            weighed = [waiting(w.ending) for w in self._waiting]
            taken = self._waiting[: next_batch(weighed, self._most, self._most_bytes)]
            del self._waiting[: len(taken)]
        if len(taken) == 1 and taken[0] is mine:
            results: list[Written | None] = [write_ending(self._db, mine.ending, mine.sells)]
        elif len(taken) == 1:
            results = [None]
        else:
            results = self._together(taken)
        with self._turn:
            for each, written in zip(taken, results, strict=True):
                each.written, each.alone, each.done = written, written is None, True
            self._turn.notify_all()

    def _together(self, taken: list[_Waiting]) -> list[Written | None]:
        """Write `taken` in one statement, with their sales in its transaction. Any
        failure hands every one of them back to be written alone."""
        endings = [w.ending for w in taken]
        try:
            if not any(w.sells for w in taken):
                moves = end_many(self._db, endings)
                sold: list[Moved | None] = [None] * len(taken)
            else:
                with connection(self._db) as conn, conn.transaction():
                    moves = end_many(conn, endings)
                    sold = [
                        credits.sell_order_turn(
                            conn,
                            w.ending.fence.issue,
                            w.ending.fence.conversation_id,
                            None if w.ending.cost is None else w.ending.cost.usd,
                        )
                        if w.sells and moved.landed
                        else None
                        for w, moved in zip(taken, moves, strict=True)
                    ]
        except Exception as err:
            why = shown(str(err).splitlines()[0] if str(err) else type(err).__name__)[:200]
            log.warning(
                "%d endings not written together (%s); each is written alone", len(taken), why
            )
            return [None] * len(taken)
        self.statements.append(len(taken))
        return list(zip(moves, sold, strict=True))
