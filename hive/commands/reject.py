"""`hive reject N --note T`: send issue N's work back with your note as its review note
(the next attempt's brief carries it) and cancel its publish job: finished work waiting
for review, accepted work not yet merged (escalated instead at the send-back ceiling),
or escalated work. Exit 2: an empty note; 3: no such issue; 4: its work cannot be
rejected now (the line says where it stands)."""

from __future__ import annotations

import argparse

from hive.services import judgement
from hive.services.database import store_connection
from hive.services.issues import issue_number
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "reject", help="send an issue's work back with a note", description=__doc__
    )
    parser.add_argument("issue", metavar="N", help="the issue number")
    parser.add_argument("--note", required=True, metavar="T", help="what is wrong, for the bee")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    issue = issue_number(args.issue)
    with store_connection(Settings.from_env()) as db:
        print(judgement.reject(db, issue, args.note))
    return 0
