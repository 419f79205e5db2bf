"""Credits where people ask: `hive credit grant|balance|history` and `hive issue add
--account` as a user runs them (a subprocess against the real test database), and
`GET /api/credits/<account>` and the API's `account` field over loopback."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from hive.store import credits, issues
from hive.store.credits import Sale
from hive.store.db import connection
from tests.unit.surface.helpers import bearer, call

from .conftest import TOKEN
from .test_commands import hive, one_line_error

pytestmark = pytest.mark.live


def test_grant_balance_and_history_as_a_user_runs_them(world):
    done = hive(world, "credit", "grant", "team-a", "1000", "--note", "q3 budget")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith("granted 1000 tokens to team-a; balance 1000 tokens")
    assert b"HIVE_CREDITS is off" in done.stdout
    with connection(world.db) as conn, conn.transaction():
        credits.sell(conn, Sale("bee:t", "team-a", 7, 0.0123, Decimal(2), 1, "alice"))
    shown = json.loads(hive(world, "credit", "balance", "team-a", "--json").stdout)
    assert (shown["balance"], shown["granted"], shown["sold"]) == (995, 1000, 5)
    every = hive(world, "credit", "balance").stdout.decode()
    assert every == "team-a: balance 995 tokens\n"
    lines = hive(world, "credit", "history", "team-a").stdout.decode().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(
        "sale   -5 #7 bee:t (cost $0.0123 x2), on key 1 lent by alice (earns nothing)"
    )
    assert "grant  +1000 (burns " in lines[1] and lines[1].endswith("q3 budget")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["grant", "team a", "5"], "account 'team a' is not an account name"),
        (["grant", "team", "0"], "tokens '0' is not a whole number from 1"),
        (["grant", "team", "-5"], "tokens '-5' is not a whole number"),
        (["grant", "team", "٣"], "tokens '٣' is not a whole number"),
        (["grant", "team", "5", "--note", "a\x1bb"], "note: one line of at most 200"),
        (["history", "-x"], None),
    ],
)
def test_a_bad_account_amount_or_note_is_one_line_and_exit_2(world, args, said):
    done = hive(world, "credit", *args)
    assert done.returncode == 2
    if said is not None:
        assert said in one_line_error(done)
    assert credits.accounts(world.db) == []


def test_issue_add_names_its_account_and_refuses_one_that_is_not(world):
    done = hive(world, "issue", "add", "--title", "t", "--account", "team-b")
    assert done.returncode == 0, done.stderr
    made = issues.get(world.db, int(done.stdout))
    assert made is not None and made.account == "team-b"
    bad = hive(world, "issue", "add", "--title", "t", "--account", "a/b")
    assert bad.returncode == 2
    assert one_line_error(bad).startswith("hive: account: 'a/b' is not an account name")


def test_the_api_reads_an_accounts_standing_and_takes_an_issues_account(world, serve):
    server = serve(token=TOKEN)
    t0 = datetime.now(UTC)
    credits.grant(world.db, "team-a", 40, Decimal(3), now=t0)
    credits.grant(world.db, "team-a", 10, Decimal(30), now=t0)
    shown = call(server, "GET", "/api/credits/team-a", headers=bearer(TOKEN)).json()
    assert (shown["balance"], shown["burning_soon"], shown["overdrawn"]) == (50, 40, 0)
    assert [lot["left"] for lot in shown["lots"]] == [40, 10]
    nobody = call(server, "GET", "/api/credits/nobody", headers=bearer(TOKEN)).json()
    assert (nobody["balance"], nobody["lots"]) == (0, [])
    bot = call(server, "GET", "/api/credits/dependabot%5Bbot%5D", headers=bearer(TOKEN))
    assert bot.status == 200 and bot.json()["account"] == "dependabot[bot]"
    bad = call(server, "GET", "/api/credits/a%20b", headers=bearer(TOKEN))
    assert bad.status == 400 and "is not an account name" in bad.json()["error"]
    assert call(server, "GET", "/api/credits/team-a").status == 401
    body = json.dumps({"title": "paid", "account": "team-a"}).encode()
    made = call(server, "POST", "/api/issues", body=body, headers=bearer(TOKEN)).json()
    issue = issues.get(world.db, made["number"])
    assert issue is not None and issue.account == "team-a"
    wrong = json.dumps({"title": "t", "account": 5}).encode()
    refused = call(server, "POST", "/api/issues", body=wrong, headers=bearer(TOKEN))
    assert refused.status == 400 and refused.json()["error"].startswith("account: expected")
