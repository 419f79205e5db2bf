"""Credits on the board: the header names each account's balance and what burns soon;
an issue's page names who pays, what that account holds and what the issue bought."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from hive.store import credits, issues
from hive.store.credits import Sale
from hive.store.db import connection
from hive.store.issues import NewIssue
from tests.unit.surface.helpers import call


def test_the_header_shows_balances_and_an_issue_page_shows_who_pays(world, serve):
    issues.upsert(world.db, 1, NewIssue(title="paid", account="team"))
    issues.upsert(world.db, 2, NewIssue(title="free"))
    now = datetime.now(UTC)
    credits.grant(world.db, "team", 40, Decimal(3), now=now)
    credits.grant(world.db, "team", 60, Decimal(30), now=now)
    with connection(world.db) as conn, conn.transaction():
        credits.sell(conn, Sale("bee:a", "team", 1, 0.0123, Decimal(2)))
        credits.sell(conn, Sale("bee:b", "team", 1, None, Decimal(2)))
    server = serve()
    board = call(server, "GET", "/board").body.decode()
    assert '<p class="credit">credit: team 94 tokens, 34 burning within 7 days</p>' in board
    page = call(server, "GET", "/board/issues/1").body.decode()
    assert (
        "<h2>Credit</h2><p>paid by team: 94 tokens, 34 burning within 7 days; this issue"
        " bought 6 tokens over 2 turns (1 unpriced)</p>"
    ) in page
    assert "<h2>Credit</h2>" not in call(server, "GET", "/board/issues/2").body.decode()


def test_no_header_line_without_an_account(world, serve):
    assert 'class="credit"' not in call(serve(), "GET", "/board").body.decode()
