"""What a chaos run left, read once it is over: each issue's attempts from the store,
the agents' log, and each finished order's bundle as the git binary reads it (verified
and fetched into a clone of the upstream repository)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from hive.chaos.agent import TurnEvent, parse_log, work_line
from hive.chaos.invariants import BundleCheck, Ledger
from hive.chaos.loop import IssueEnd, PushKept
from hive.chaos.person import Pushed
from hive.chaos.world import issue_file
from hive.errors import HiveError
from hive.git.safety import git_environment
from hive.rules.branches import branch_name
from hive.rules.credits import LedgerError, replay
from hive.rules.issue_states import IssueState
from hive.rules.lifecycle import ReviewState
from hive.rules.outcome_codes import OutcomeCode
from hive.store import bundles, credits, orders

GIT_TIMEOUT_SECONDS = 60


def attempts(
    db: psycopg.Connection[Any], issues: Iterable[int]
) -> dict[int, list[OutcomeCode | None]]:
    """Each issue's attempts' codes, oldest first (its archived rows, then its row)."""
    found: dict[int, list[OutcomeCode | None]] = {}
    for issue in issues:
        seen = [a.outcome_code for a in orders.history(db, issue)]
        current = orders.get(db, issue)
        if current is not None:
            seen.append(current.outcome_code)
        found[issue] = seen
    return found


def conversations(
    db: psycopg.Connection[Any], issues: Iterable[int]
) -> dict[str, OutcomeCode | None]:
    """Each attempt's code by its conversation id (its archived rows and its row)."""
    found: dict[str, OutcomeCode | None] = {}
    for issue in issues:
        for a in orders.history(db, issue):
            found[str(a.snapshot.get("conversation_id"))] = a.outcome_code
        current = orders.get(db, issue)
        if current is not None:
            found[str(current.conversation_id)] = current.outcome_code
    return found


def ledger(db: psycopg.Connection[Any], account: str) -> Ledger:
    """The account's sales, and whether its ledger replays to the sums it holds with no
    lot below zero."""
    turns = tuple(str(s["turn"]) for s in credits.history(db, account, limit=1_000_000)
                  if s["kind"] == "sale")  # fmt: skip
    try:
        book = replay(credits.movements(db, [account], every_row=True)[account])
    except LedgerError as err:
        return Ledger(turns, f"the ledger does not replay: {err}")
    sums = credits.sums(db)
    held = (sums.get("grant", 0), sums.get("sale", 0), sums.get("burn", 0))
    if (book.granted, book.sold, book.burned) != held:
        return Ledger(turns, f"the replay {book} is not the ledger's sums {held}")
    if any(lot.left < 0 for lot in book.lots):
        return Ledger(turns, "a lot went below zero")
    return Ledger(turns)


def turn_events(log: Path) -> list[TurnEvent]:
    return parse_log(log.read_text(encoding="utf-8", errors="replace"))


def check_bundles(
    db: psycopg.Connection[Any],
    finished: Iterable[int],
    events: list[TurnEvent],
    upstream: Path,
    scratch: Path,
) -> list[BundleCheck]:
    """Each finished order's bundle, written out, verified and fetched by the git binary
    in a clone of `upstream`; its branch must hold the line of a turn that logged `end`."""
    if shutil.which("git") is None:
        raise HiveError("hive chaos checks bundles with the git binary: install git")
    clone = scratch / "verify"
    _git("clone", "-q", str(upstream), str(clone), cwd=scratch)
    ended: dict[int, set[str]] = {}
    for event in events:
        if event.kind == "end":
            ended.setdefault(event.issue, set()).add(event.turn)
    found = []
    for issue in finished:
        stored = bundles.get(db, issue)
        if stored is None:
            found.append(BundleCheck(issue, False, False, False, False))
            continue
        path = scratch / f"{branch_name(issue)}.bundle"
        path.write_bytes(stored.data)
        verified = _git("bundle", "verify", "-q", str(path), cwd=clone) is not None
        ref = f"refs/chaos/{issue}"
        fetched = (
            _git("fetch", "-q", str(path), f"{branch_name(issue)}:{ref}", cwd=clone) is not None
        )
        text = _git("show", f"{ref}:{issue_file(issue)}", cwd=clone) if fetched else None
        lines = set((text or "").splitlines())
        holds = any(work_line(issue, turn) in lines for turn in ended.get(issue, ()))
        # from where the branch left main: with --loop, main has moved on since
        changed = _git("diff", "--name-only", f"HEAD...{ref}", cwd=clone) if fetched else None
        outside = tuple(p for p in (changed or "").splitlines() if p != issue_file(issue))
        found.append(BundleCheck(issue, True, verified, fetched, holds, outside))
    return found


def finished_issues(outcomes: dict[int, list[OutcomeCode | None]]) -> list[int]:
    """The issues whose last attempt finished (its code FINISHED), by number."""
    return [
        issue
        for issue, seen in sorted(outcomes.items())
        if seen and seen[-1] is OutcomeCode.FINISHED
    ]


def _git(*args: str, cwd: Path) -> str | None:
    """git's output, or None when it failed."""
    env = git_environment(os.environ) | {"HOME": str(cwd)}
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT_SECONDS,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


def issue_ends(db: psycopg.Connection[Any], issues: Iterable[int]) -> list[IssueEnd]:
    """Each issue's end as the store tells it: closed with its merge, or escalated."""
    found = []
    for n in issues:
        row = db.execute(
            "SELECT i.state, d.merged_sha, d.review_state, d.review_note"
            " FROM hive.queen_issue AS i LEFT JOIN hive.queen_dispatch AS d ON d.issue = i.number"
            " WHERE i.number = %s",
            (n,),
        ).fetchone()
        if row is None:
            found.append(IssueEnd(n, None, False))
            continue
        state, sha, review, note = row  # the columns' text, read as their members
        escalated = (note or "") if _review(review) is ReviewState.ESCALATE else None
        found.append(IssueEnd(n, sha, IssueState(state) is IssueState.CLOSED, escalated))
    return found


def _review(text: str | None) -> ReviewState | None:
    return None if text is None else ReviewState(text)


def main_changes(
    upstream: Path, merged: dict[int, str]
) -> tuple[dict[int, bool], dict[int, list[str]]]:
    """For each merged issue: whether its merge sha is main or an ancestor of it, and the
    work lines (`work_line`'s form) main's file of the issue holds, in order."""
    on_main: dict[int, bool] = {}
    lines: dict[int, list[str]] = {}
    for n, sha in merged.items():
        on_main[n] = _git("merge-base", "--is-ancestor", sha, "main", cwd=upstream) is not None
        text = _git("show", f"main:{issue_file(n)}", cwd=upstream) or ""
        lines[n] = [line for line in text.splitlines() if line.startswith(f"chaos {n} turn ")]
    return on_main, lines


def person_changes(upstream: Path, pushed: Iterable[Pushed]) -> list[PushKept]:
    """Each push of the person as main holds it: its commit on main, its line there."""
    found = []
    for push in pushed:
        on_main = _git("merge-base", "--is-ancestor", push.sha, "main", cwd=upstream) is not None
        text = _git("show", f"main:{push.path}", cwd=upstream) or ""
        found.append(
            PushKept(push.sha, push.path, on_main, push.line in text.splitlines(), push.issue)
        )
    return found


def first_dispatches(db: psycopg.Connection[Any]) -> dict[int, datetime]:
    """Each issue's first attempt's dispatch (the Queen's choice: the row's created_at)."""
    rows = db.execute(
        "SELECT issue, min(at) FROM ("
        " SELECT issue, (snapshot->>'created_at')::timestamptz AS at"
        " FROM hive.queen_dispatch_history WHERE (snapshot->>'attempt')::int = 1"
        " UNION ALL SELECT issue, created_at FROM hive.queen_dispatch WHERE attempt = 1"
        ") AS first GROUP BY issue"
    ).fetchall()
    return {int(issue): at for issue, at in rows}
