"""`hive order cancel N`: end issue N's order in flight as `cancelled`. A runner's bee
stops at its next heartbeat; the issue is dispatched again after the retry card's
back-off unless a person closes or blocks it. Exit 3: no such issue; 4: no order in
flight."""

from __future__ import annotations

import argparse

from hive.services import orders
from hive.services.database import store_connection
from hive.services.issues import issue_number
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("order", help="act on an issue's order", description=__doc__)
    verbs = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    cancel = verbs.add_parser("cancel", help="cancel an order in flight", description=__doc__)
    cancel.add_argument("issue", metavar="N", help="the issue number")
    cancel.set_defaults(func=run_cancel)


def run_cancel(args: argparse.Namespace) -> int:
    issue = issue_number(args.issue)
    with store_connection(Settings.from_env()) as db:
        print(orders.cancel(db, issue))
    return 0
