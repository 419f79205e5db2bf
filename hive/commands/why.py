"""`hive why N`: the Queen's sentences about issue N, newest first, one line each with its
time (UTC): the rounds' reasons, each attempt's dispatch, ending and verdict with its
note, approvals and merges, the publish job's step, the checks that did not pass and the
issue's close. Exit 3: no such issue. A control character in a sentence (a review note
quoting an agent) is shown escaped, as `hive status` shows it."""

from __future__ import annotations

import argparse
from datetime import UTC

from hive.rules.text import shown
from hive.services import history
from hive.services.database import store_connection
from hive.services.issues import issue_number
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("why", help="the Queen's sentences about an issue", description=__doc__)
    parser.add_argument("issue", metavar="N", help="the issue number")
    parser.add_argument(
        "--limit",
        type=int,
        default=history.WHY_LINES,
        metavar="K",
        help=f"show at most K sentences (default {history.WHY_LINES})",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    issue = issue_number(args.issue)
    with store_connection(Settings.from_env()) as db:
        said = history.why(db, issue, limit=max(1, args.limit))
    if not said:
        print(f"nothing is said about #{issue} yet")
    for sentence in said:
        print(f"{sentence.at.astimezone(UTC):%Y-%m-%d %H:%M:%S}Z  {shown(sentence.text)}")
    return 0
