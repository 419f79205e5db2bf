"""The board's HTML: the page, a column, a card. Every text from the store goes through
`text()` (HTML-escaped, control characters shown as escapes)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime

from hive.board import controls
from hive.board.assets import asset_url
from hive.board.escape import text
from hive.rules.board import COLUMNS, Column
from hive.services.board import SHA_SHOWN, Card, Cards
from hive.services.pulse import Pulse

COMB_CELLS = 24  # the strip of cells that flashes once per event
PUBLIC_REFRESH_SECONDS = 60  # the public board has no stream: it reloads itself
CardDrawer = Callable[[Card, datetime], str]
COLUMN_HINTS = {
    Column.BACKLOG: "open, waiting for its next attempt",
    Column.BLOCKED: "waiting on an open blocker",
    Column.RUNNING: "an order in flight: queued or with a bee",
    Column.REVIEW: "finished work being judged, at the merge gate, or escalated",
    Column.DONE: "merged",
    Column.DROPPED: "closed without a merge",
}


def age(since: datetime, now: datetime) -> str:
    """A short age: 45 s, 12 min, 3 h, 4 d."""
    seconds = max(0, int((now - since).total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def when(at: datetime, now: datetime) -> str:
    """A <time> the page's script keeps relative ("12 min ago")."""
    return (
        f'<time datetime="{at.isoformat()}" data-ago="1" title="{at.isoformat()}">'
        f"{age(at, now)} ago</time>"
    )


def card(c: Card, now: datetime) -> str:
    """One card: an <li> whose link opens the issue's page."""
    facts = []
    if c.attempt is not None:
        facts.append(f"attempt {c.attempt}")
    if c.queued:
        facts.append("queued")
    elif c.runner is not None and c.column is Column.RUNNING:
        facts.append(f"on {text(c.runner)}")
    if c.key_index is not None:
        facts.append(f"key {c.key_index}")
    since = (
        f'<time datetime="{c.since.isoformat()}" data-age="1" title="in this column since '
        f'{c.since.isoformat()}">{age(c.since, now)}</time>'
    )
    facts.append(f"for {since}")
    blockers = ""
    if c.blockers:
        named = ", ".join(f"#{n}" for n in c.blockers)
        blockers = f'<p class="blockers">blocked by {named}</p>'
    person = '<p class="person">a person decides</p>' if c.needs_person else ""
    labels = "".join(f'<span class="label">{text(label)}</span>' for label in c.labels[:4])
    last = f'<p class="last">{text(c.last.text)} {when(c.last.at, now)}</p>'
    merged = ""
    if c.merged_sha is not None:
        sha = text(c.merged_sha[:SHA_SHOWN])
        merged = f'<p class="merged">merged as <code>{sha}</code></p>'
        if sha in c.last.text:
            last = ""
    runner = c.runner if c.runner is not None and not c.queued else ""
    return (
        f'<li id="card-{c.number}" class="card col-{c.column.value}" '
        f'data-sort="{c.sort_key:.3f}" data-issue="{c.number}" '
        f'data-labels="{text(json.dumps(list(c.labels)))}" data-runner="{text(runner)}">'
        f'<a href="/board/issues/{c.number}"><span class="num">#{c.number}</span> '
        f'<span class="title">{text(c.title)}</span></a>'
        f'<p class="facts">{" · ".join(facts)}</p>{blockers}{person}{merged}{last}'
        f"{f'<p class=labels>{labels}</p>' if labels else ''}"
        f"{controls.actions(c.number, c.column)}</li>"
    )


def public_card(c: Card, now: datetime) -> str:
    """A card of the public board: its number, title and age, nothing else."""
    return (
        f'<li id="card-{c.number}" class="card col-{c.column.value}" '
        f'data-sort="{c.sort_key:.3f}" data-issue="{c.number}">'
        f'<span class="num">#{c.number}</span> <span class="title">{text(c.title)}</span>'
        f'<p class="facts">for <time datetime="{c.since.isoformat()}" data-age="1">'
        f"{age(c.since, now)}</time></p></li>"
    )


def column_cards(
    cards: Sequence[Card], column: Column, now: datetime, drawn: CardDrawer | None = None
) -> str:
    mine = sorted((c for c in cards if c.column is column), key=lambda c: (c.sort_key, c.number))
    return "".join((drawn or card)(c, now) for c in mine)


def columns(found: Cards, now: datetime, drawn: CardDrawer | None = None) -> dict[str, str]:
    """Each column's cards as HTML, by the column's name."""
    return {col.value: column_cards(found.cards, col, now, drawn) for col in COLUMNS}


def board_page(
    found: Cards, since: str, now: datetime, csrf: str, pulse: Pulse, credit: str = ""
) -> str:
    """The whole board for a holder of the token; `since` is the event the page was
    drawn after (its stream resumes there), `csrf` the page's token for its buttons,
    `credit` the header's line of balances (hive/board/credit.py)."""
    header = (
        f'<p id="pulse" class="pulse">{controls.pulse(pulse)}</p>{credit}'
        f"{controls.filters(public=False)}"
        '<p id="answer" class="answer" role="status" aria-live="polite"></p>'
    )
    body = f'<body data-page="board" data-since="{text(since)}" data-csrf="{text(csrf)}">'
    return _board(found, now, body, header, card)


def public_board_page(found: Cards, now: datetime) -> str:
    """The public board (HIVE_BOARD_PUBLIC=on): columns, numbers, titles and ages; no
    link to an issue, no button, no stream (it reloads itself every minute)."""
    header = (
        f'{controls.filters(public=True)}<p class="signin"><a href="/">sign in</a> '
        "(the token) to act</p>"
    )
    return _board(found, now, '<body data-page="public">', header, public_card, refresh=True)


def _board(
    found: Cards,
    now: datetime,
    body_open: str,
    header: str,
    drawn: CardDrawer,
    *,
    refresh: bool = False,
) -> str:
    html_columns = columns(found, now, drawn)
    counts = {col: sum(1 for c in found.cards if c.column is col) for col in COLUMNS}
    sections = []
    for col in COLUMNS:
        name = col.value
        more = ""
        shown_closed = counts[Column.DONE] + counts[Column.DROPPED]
        if col in (Column.DONE, Column.DROPPED) and found.closed_total > shown_closed:
            more = f'<p class="more">the latest {shown_closed} of {found.closed_total} closed</p>'
        elif found.hidden.get(col):
            total = counts[col] + found.hidden[col]
            more = f'<p class="more">the first {counts[col]} of {total}</p>'
        sections.append(
            f'<section class="column" data-column="{name}" aria-labelledby="h-{name}">'
            f'<h2 id="h-{name}">{name} <span class="count" data-count="{name}">'
            f"{counts[col]}</span></h2>"
            f'<p class="hint">{COLUMN_HINTS[col]}</p>'
            f'<ol class="cards" data-cards="{name}">{html_columns[name]}</ol>{more}</section>'
        )
    comb = "".join('<span class="cell"></span>' for _ in range(COMB_CELLS))
    live = "" if refresh else '<p id="live" role="status" aria-live="polite">connecting…</p>'
    body = (
        f"{body_open}"
        '<a class="skip" href="#board">Skip to the board</a>'
        f"<header><h1>The hive</h1>{live}"
        f'<div id="comb" class="comb" aria-hidden="true">{comb}</div>{header}</header>'
        f'<main id="board" class="board">{"".join(sections)}</main>'
    )
    return page("The hive: board", body, refresh_seconds=PUBLIC_REFRESH_SECONDS if refresh else 0)


def page(title: str, body: str, *, refresh_seconds: int = 0) -> str:
    """A whole HTML document around `body` (which opens <body>)."""
    refresh = f'<meta http-equiv="refresh" content="{refresh_seconds}">' if refresh_seconds else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">{refresh}'
        f"<title>{text(title)}</title>"
        f'<link rel="icon" href="{asset_url("favicon.svg")}" type="image/svg+xml">'
        f'<link rel="stylesheet" href="{asset_url("board.css")}">'
        f'<script src="{asset_url("board.js")}" defer></script>'
        f"</head>{body}</body></html>"
    )
