"""`hive issue add|list|close|reopen|edit|block|show|accept-shape`: the built-in issue
source (DESIGN 8), a person's changes to an issue (DESIGN 10) and the shaper's proposals
(DESIGN 11). Exit 2: a wrong field; 3: no such issue; 4: not now (the line says where
the issue stands)."""

from __future__ import annotations

import argparse
import json

from hive.commands.approve import person
from hive.forge.github.api import Repository
from hive.forge.github.client import GitHubClient
from hive.rules.modes import ForgeMode
from hive.rules.text import shown
from hive.services import changes, issues, shaping
from hive.services.changes import IssueChange
from hive.services.database import store_connection
from hive.services.issues import NewIssue
from hive.settings import Settings

TITLE_COLUMN_CHARS = 50


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("issue", help="add, list, close, reopen, edit or block issues")
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
    add.add_argument(
        "--account",
        metavar="A",
        help="the credit account that pays for its turns (default: HIVE_CREDIT_DEFAULT_ACCOUNT)",
    )
    add.set_defaults(func=run_add)

    listing = verbs.add_parser("list", help="list every issue, by number")
    listing.add_argument("--json", action="store_true", help="print one JSON list")
    listing.set_defaults(func=run_list)

    close = verbs.add_parser(
        "close", help="close an issue by hand (an order in flight and its publish job end)"
    )
    close.add_argument("issue", metavar="N", help="the issue number")
    close.set_defaults(func=run_close)

    reopen = verbs.add_parser("reopen", help="open a closed issue again")
    reopen.add_argument("issue", metavar="N", help="the issue number")
    reopen.set_defaults(func=run_reopen)

    edit = verbs.add_parser(
        "edit",
        help="replace an issue's fields (a repeated option replaces the whole list); "
        "changed criteria send judged work round again",
    )
    edit.add_argument("issue", metavar="N", help="the issue number")
    edit.add_argument("--title", help="its new title")
    edit.add_argument("--body", help="its new body")
    for name, meta, what in (
        ("--label", "L", "its labels"),
        ("--boundary", "PATH", "its boundary"),
        ("--criterion", "C", "its acceptance criteria"),
    ):
        edit.add_argument(name, action="append", metavar=meta, help=f"{what} (repeatable)")
    edit.set_defaults(func=run_edit)

    show = verbs.add_parser("show", help="print an issue, with the shaper's pending proposal")
    show.add_argument("issue", metavar="N", help="the issue number")
    show.set_defaults(func=run_show)

    accept = verbs.add_parser(
        "accept-shape", help="apply the shaper's pending proposal (its boundary and criteria)"
    )
    accept.add_argument("issue", metavar="N", help="the issue number")
    accept.set_defaults(func=run_accept_shape)

    block = verbs.add_parser("block", help="block an issue by another until that one closes")
    block.add_argument("issue", metavar="N", help="the issue to block")
    block.add_argument("--by", required=True, metavar="M", help="the issue it waits on")
    block.set_defaults(func=run_block)


def run_add(args: argparse.Namespace) -> int:
    issue = issues.check(
        NewIssue(
            title=args.title,
            body=args.body,
            labels=tuple(args.label),
            boundary=tuple(args.boundary),
            criteria=tuple(args.criterion),
            account=args.account,
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
        # a row stored before the door refused control characters is printed escaped
        title = shown(i["title"])
        if len(title) > TITLE_COLUMN_CHARS:
            title = title[: TITLE_COLUMN_CHARS - 3] + "..."
        extra = shown(" ".join([*i["labels"], *i["boundary"]]))
        print(f"{i['number']:>5}  {i['state']:<6}  {title:<{TITLE_COLUMN_CHARS}}  {extra}")
    return 0


def run_close(args: argparse.Namespace) -> int:
    issue = issues.issue_number(args.issue)
    with store_connection(Settings.from_env()) as db:
        print(changes.close(db, issue))
    return 0


def run_reopen(args: argparse.Namespace) -> int:
    issue = issues.issue_number(args.issue)
    with store_connection(Settings.from_env()) as db:
        print(changes.reopen(db, issue))
    return 0


def run_edit(args: argparse.Namespace) -> int:
    issue = issues.issue_number(args.issue)
    change = IssueChange(
        title=args.title,
        body=args.body,
        labels=args.label,
        boundary=args.boundary,
        criteria=args.criterion,
    )
    with store_connection(Settings.from_env()) as db:
        print(changes.edit(db, issue, change))
    return 0


def run_block(args: argparse.Namespace) -> int:
    issue = issues.issue_number(args.issue)
    by = issues.issue_number(args.by)
    with store_connection(Settings.from_env()) as db:
        print(changes.block(db, issue, by))
    return 0


def run_show(args: argparse.Namespace) -> int:
    issue = issues.issue_number(args.issue)
    with store_connection(Settings.from_env()) as db:
        print(shaping.show(db, issue))
    return 0


def run_accept_shape(args: argparse.Namespace) -> int:
    issue = issues.issue_number(args.issue)
    settings = Settings.from_env()
    edit_remote = None
    if settings.forge == ForgeMode.GITHUB and settings.github_token:
        client = GitHubClient(settings.github_api_url, settings.github_token)
        edit_remote = Repository(client, settings.github_repo).edit_issue_body
    with store_connection(settings) as db:
        print(shaping.accept(db, issue, person(), edit_remote))
    return 0
