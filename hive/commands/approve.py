"""`hive approve N`: open the merge gate of issue N's accepted work, which waits for a
person (zero checks never open it alone). Exit 3: no such issue; 4: its work is not
accepted and waiting at the gate (the line says where it stands)."""

from __future__ import annotations

import argparse
import getpass

from hive.services import judgement
from hive.services.database import store_connection
from hive.services.issues import issue_number
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "approve", help="open the merge gate of an issue's accepted work", description=__doc__
    )
    parser.add_argument("issue", metavar="N", help="the issue number")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    issue = issue_number(args.issue)
    with store_connection(Settings.from_env()) as db:
        print(judgement.approve(db, issue, by=person()))
    return 0


def person() -> str:
    """Who approves, as the row records it: this command's user."""
    try:
        return f"{getpass.getuser()} (cli)"
    except (KeyError, OSError):  # no name for this uid (a container's user)
        return "a person at the command line"
