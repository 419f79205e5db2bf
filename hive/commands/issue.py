"""`hive issue add|list`: the built-in issue source (DESIGN 8)."""

from __future__ import annotations

import argparse
import json

from hive.commands import store_connection
from hive.services import issues
from hive.settings import Settings
from hive.store.issues import NewIssue

TITLE_COLUMN_CHARS = 50


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("issue", help="add or list the hive's issues")
    verbs = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    add = verbs.add_parser("add", help="add an issue and print its number")
    add.add_argument("--title", required=True, help="one line saying what is wanted")
    add.add_argument("--body", default="", help="the details the bee reads")
    add.add_argument(
        "--label", action="append", default=[], metavar="L", help="a label (repeatable)"
    )
    add.add_argument(
        "--boundary",
        action="append",
        default=[],
        metavar="PATH",
        help="a file the bee may touch, relative to the repository root (repeatable)",
    )
    add.add_argument(
        "--criterion",
        action="append",
        default=[],
        metavar="C",
        help="an acceptance criterion the reviewer checks (repeatable)",
    )
    add.set_defaults(func=run_add)

    listing = verbs.add_parser("list", help="list every issue, by number")
    listing.add_argument("--json", action="store_true", help="print one JSON list")
    listing.set_defaults(func=run_list)


def run_add(args: argparse.Namespace) -> int:
    issue = issues.check(
        NewIssue(
            title=args.title,
            body=args.body,
            labels=tuple(args.label),
            boundary=tuple(args.boundary),
            criteria=tuple(args.criterion),
        )
    )
    with store_connection(Settings.from_env()) as db:
        print(issues.add(db, issue))
    return 0


def run_list(args: argparse.Namespace) -> int:
    with store_connection(Settings.from_env()) as db:
        found = issues.listing(db)
    if args.json:
        print(json.dumps(found))
        return 0
    if not found:
        print("no issues (add one with `hive issue add --title ...`)")
        return 0
    print(f"{'#':>5}  {'state':<6}  {'title':<{TITLE_COLUMN_CHARS}}  labels / boundary")
    for i in found:
        title = i["title"]
        if len(title) > TITLE_COLUMN_CHARS:
            title = title[: TITLE_COLUMN_CHARS - 3] + "..."
        extra = " ".join([*i["labels"], *i["boundary"]])
        print(f"{i['number']:>5}  {i['state']:<6}  {title:<{TITLE_COLUMN_CHARS}}  {extra}")
    return 0
