"""The board's HTML: the page, a column, a card. Every text from the store goes through
`text()` (HTML-escaped, control characters shown as escapes)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime

from hive.board.assets import asset_url
from hive.rules.board import COLUMNS, Column
from hive.rules.text import shown
from hive.services.board import Card, Cards

COMB_CELLS = 24  # the strip of cells that flashes once per event
COLUMN_HINTS = {
    Column.BACKLOG: "open, waiting for its next attempt",
    Column.BLOCKED: "waiting on an open blocker",
    Column.RUNNING: "an order in flight: queued or with a bee",
    Column.REVIEW: "finished work being judged, at the merge gate, or escalated",
    Column.DONE: "merged",
    Column.DROPPED: "closed without a merge",
}


def text(value: object, allowed: frozenset[str] = frozenset()) -> str:
    """`value` as HTML text: escaped, control characters not in `allowed` written as
    escapes."""
    return html.escape(shown(str(value), allowed), quote=True)


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
    return (
        f'<li id="card-{c.number}" class="card col-{c.column.value}" '
        f'data-sort="{c.sort_key:.3f}" data-issue="{c.number}">'
        f'<a href="/board/issues/{c.number}"><span class="num">#{c.number}</span> '
        f'<span class="title">{text(c.title)}</span></a>'
        f'<p class="facts">{" · ".join(facts)}</p>{blockers}{person}'
        f'<p class="last">{text(c.last.text)} {when(c.last.at, now)}</p>'
        f"{f'<p class=labels>{labels}</p>' if labels else ''}</li>"
    )


def column_cards(cards: Sequence[Card], column: Column, now: datetime) -> str:
    mine = sorted((c for c in cards if c.column is column), key=lambda c: (c.sort_key, c.number))
    return "".join(card(c, now) for c in mine)


def columns(found: Cards, now: datetime) -> dict[str, str]:
    """Each column's cards as HTML, by the column's name."""
    return {col.value: column_cards(found.cards, col, now) for col in COLUMNS}


def board_page(found: Cards, since: str, now: datetime, credit: str = "") -> str:
    """The whole board; `since` is the event the page was drawn after (its stream
    resumes there); `credit` is the header's line of balances (hive/board/credit.py)."""
    html_columns = columns(found, now)
    counts = {col: sum(1 for c in found.cards if c.column is col) for col in COLUMNS}
    sections = []
    for col in COLUMNS:
        name = col.value
        more = ""
        shown_closed = counts[Column.DONE] + counts[Column.DROPPED]
        if col in (Column.DONE, Column.DROPPED) and found.closed_total > shown_closed:
            more = f'<p class="more">the latest {shown_closed} of {found.closed_total} closed</p>'
        sections.append(
            f'<section class="column" data-column="{name}" aria-labelledby="h-{name}">'
            f'<h2 id="h-{name}">{name} <span class="count" data-count="{name}">'
            f"{counts[col]}</span></h2>"
            f'<p class="hint">{COLUMN_HINTS[col]}</p>'
            f'<ol class="cards" data-cards="{name}">{html_columns[name]}</ol>{more}</section>'
        )
    comb = "".join('<span class="cell"></span>' for _ in range(COMB_CELLS))
    body = (
        f'<body data-page="board" data-since="{text(since)}">'
        '<a class="skip" href="#board">Skip to the board</a>'
        '<header><h1>The hive</h1><p id="live" role="status" aria-live="polite">'
        "connecting…</p>"
        f'<div id="comb" class="comb" aria-hidden="true">{comb}</div>{credit}</header>'
        f'<main id="board" class="board">{"".join(sections)}</main>'
    )
    return page("The hive: board", body)


def page(title: str, body: str) -> str:
    """A whole HTML document around `body` (which opens <body>)."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)}</title>"
        f'<link rel="icon" href="{asset_url("favicon.svg")}" type="image/svg+xml">'
        f'<link rel="stylesheet" href="{asset_url("board.css")}">'
        f'<script src="{asset_url("board.js")}" defer></script>'
        f"</head>{body}</body></html>"
    )
