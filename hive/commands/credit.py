"""`hive credit grant|balance|history`: land a lot of tokens for an account, read an
account's standing, list its movements (hive/rules/credits.py; a token is half a US
cent). Exit 2: a wrong account, amount or note."""

from __future__ import annotations

import argparse
import json

from hive.services import credits
from hive.services.database import store_connection
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "credit", help="grant credit to an account, read its balance and history"
    )
    verbs = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    grant = verbs.add_parser(
        "grant", help="land a lot of TOKENS (half US cents) that burns HIVE_CREDIT_BURN_DAYS later"
    )
    grant.add_argument("account", metavar="A", help="the account")
    grant.add_argument("tokens", metavar="TOKENS", help="how many tokens (half US cents)")
    grant.add_argument("--note", metavar="T", help="why (one line, kept in the ledger)")
    grant.set_defaults(func=run_grant)

    balance = verbs.add_parser("balance", help="an account's balance (every account's without A)")
    balance.add_argument("account", metavar="A", nargs="?", help="the account")
    balance.add_argument("--json", action="store_true", help="print JSON")
    balance.set_defaults(func=run_balance)

    history = verbs.add_parser("history", help="an account's movements, newest first")
    history.add_argument("account", metavar="A", help="the account")
    history.add_argument(
        "--limit", type=int, default=50, metavar="K", help="show at most K (default 50)"
    )
    history.add_argument("--json", action="store_true", help="print one JSON list")
    history.set_defaults(func=run_history)


def run_grant(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    account = credits.account_name(args.account)
    tokens = credits.token_count(args.tokens)
    with store_connection(settings) as db:
        after = credits.grant(db, account, tokens, settings.credit_burn_days, args.note)
    print(f"granted {tokens} tokens to {account}; {_standing(after)}")
    if not settings.credits:
        print("note: HIVE_CREDITS is off, so nothing is sold and no account is held back")
    return 0


def run_balance(args: argparse.Namespace) -> int:
    with store_connection(Settings.from_env()) as db:
        if args.account is None:
            found = credits.every_standing(db)
        else:
            found = [credits.standing(db, credits.account_name(args.account))]
    if args.json:
        print(json.dumps(found if args.account is None else found[0]))
        return 0
    if not found:
        print("no account has any credit yet (hive credit grant A TOKENS)")
    for one in found:
        print(f"{one['account']}: {_standing(one)}")
    return 0


def run_history(args: argparse.Namespace) -> int:
    account = credits.account_name(args.account)
    with store_connection(Settings.from_env()) as db:
        rows = credits.history(db, account, limit=max(1, args.limit))
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print(f"no movement of {account} yet")
    for row in rows:
        print(f"{row['at'][:19]}Z  {credits.line(row)}")
    return 0


def _standing(one: dict[str, object]) -> str:
    said = f"balance {one['balance']} tokens"
    if one["overdrawn"]:
        said += f" (overdrawn by {one['overdrawn']})"
    if one["burning_soon"]:
        said += f", {one['burning_soon']} burning within {one['burning_soon_days']} days"
    return said
