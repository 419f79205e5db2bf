"""`Board`: what the HTTP routes read for the board, on the store `db` (a pool: the
routes run on request threads) and a listening connection of its own to `url`."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from hive.board import controls, credit, issue_page, render
from hive.board.hub import Hub, Sink
from hive.services import board, credits, pulse
from hive.services.board_watch import unwatch, watch
from hive.services.database import Db

Clock = Callable[[], datetime]


class Board:
    """The pages are HTML text; a stream is opened with `subscribe`. `close()` stops the
    listener (safe twice); a later page starts it again."""

    def __init__(
        self,
        db: Db,
        url: str,
        now: Clock = lambda: datetime.now(UTC),
        *,
        keys: Mapping[int, str] | None = None,
    ) -> None:
        self.db = db
        self.now = now
        self.keys = dict(keys or {})  # key index -> fingerprint, for the keys resting
        self.hub = Hub(url, _Renderer(db, now))

    def page(self, csrf: str) -> str:
        """The board, its buttons sending `csrf`. The listener starts first and the
        position is read before the cards: whatever changes after the read reaches the
        page's stream."""
        self.hub.start()
        since = self.hub.position()
        now = self.now()
        figures = pulse.pulse(self.db, self.keys, now)
        balances = credit.header(credits.every_standing(self.db, now))
        return render.board_page(board.cards(self.db), since, now, csrf, figures, balances)

    def public_page(self) -> str:
        """The public board: no stream, so no listener."""
        return render.public_board_page(board.cards(self.db), self.now())

    def pulse(self) -> str:
        """The header's figures (the page fetches them again as cards move)."""
        return controls.pulse(pulse.pulse(self.db, self.keys, self.now()))

    def issue(self, number: int, csrf: str) -> str:
        """Issue `number`'s page; UnknownIssue when there is none."""
        self.hub.start()
        view = board.issue_view(self.db, number)
        return issue_page.issue_page(view, self.now(), csrf)

    def summary(self, number: int) -> str:
        return issue_page.summary(board.issue_view(self.db, number), self.now())

    def transcript(self, number: int, seen: dict[uuid.UUID, int]) -> tuple[str, str]:
        """The transcript's lines past `seen` as HTML, and the cursor after them."""
        found = board.transcript_after(self.db, number, seen)
        html = issue_page.lines(found.lines, found.attempt_of)
        return html, issue_page.after_text(found.marks)

    def opener(
        self, *, resume: str | None, issue: int | None
    ) -> Callable[[Sink], Callable[[], None]]:
        """What opens a stream (on a request thread: the listener starts here, so the
        opener, which runs on the server's loop thread, only registers the sink)."""
        self.hub.start()
        return lambda sink: self.hub.subscribe(sink, resume=resume, issue=issue)

    def close(self) -> None:
        self.hub.stop()


class _Renderer:
    def __init__(self, db: Db, now: Clock) -> None:
        self.db = db
        self.now = now

    def watch(self, holder: str, ttl_seconds: float) -> None:
        watch(self.db, holder, ttl_seconds)

    def unwatch(self, holder: str) -> None:
        unwatch(self.db, holder)

    def cards(self, numbers: Sequence[int]) -> list[dict[str, Any]]:
        found = {c.number: c for c in board.cards(self.db, numbers).cards}
        now = self.now()
        out: list[dict[str, Any]] = []
        for n in sorted(set(numbers) | set(found)):
            card = found.get(n)
            if card is None:
                out.append({"issue": n, "column": None})
                continue
            out.append(
                {
                    "issue": n,
                    "column": card.column.value,
                    "sort": round(card.sort_key, 3),
                    "html": render.card(card, now),
                }
            )
        return out

    def snapshot(self) -> dict[str, Any]:
        found = board.cards(self.db)
        return {"columns": render.columns(found, self.now())}
