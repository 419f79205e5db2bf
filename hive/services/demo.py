"""The demo's database (`hive demo`): a fresh one of its own, migrated, with the sample
issues; where each issue is, in a few words, while the demo runs; and what each issue
came to, for its summary."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import psycopg
from dulwich.object_format import SHA1
from dulwich.pack import PackData

from hive import demo_data
from hive.errors import HiveError
from hive.git.importing import parse
from hive.rules.issue_states import ClosedCode, IssueState
from hive.rules.jobs import JobKind
from hive.store import bundles, issues, jobs, orders, scratch, shapes
from hive.store.migrate import apply as apply_migrations

DATABASE = "hive_demo"
COMMIT_TYPE = 1  # a commit's type number in a pack


@dataclass(frozen=True)
class Row:
    issue: int
    title: str
    attempts: int
    verdicts: str  # each attempt's verdict, in order
    runner: str  # the last attempt's
    commits: int  # the last attempt's bundle
    merged_sha: str | None


@dataclass(frozen=True)
class Stand:
    """Where an issue is: a few words for people (`said`), and why it closed (None: open)."""

    said: str
    closed: ClosedCode | None = None

    @property
    def merged(self) -> bool:
        return self.closed is ClosedCode.MERGED


def fresh_database(server_url: str) -> str:
    """Drop and create DATABASE on the server of `server_url`, migrated; its URL."""
    if psycopg.conninfo.conninfo_to_dict(server_url).get("dbname") == DATABASE:
        raise HiveError(f"HIVE_DATABASE_URL names {DATABASE}, which the demo drops and creates")
    scratch.drop(server_url, DATABASE)
    url = scratch.create(
        server_url,
        DATABASE,
        refused="the demo needs its own: grant CREATEDB to the hive's user, or unset"
        " HIVE_DATABASE_URL to use the embedded server",
    )
    apply_migrations(url)
    return url


def add_sample_issues(url: str) -> None:
    """The sample issues (hive/demo_data.py), in the database at `url`."""
    with psycopg.connect(url, autocommit=True) as db:
        for sample in demo_data.ALL_ISSUES:
            issues.upsert(db, sample.number, sample.issue)


def states(db: psycopg.Connection[Any]) -> dict[int, Stand]:
    """Where each issue is: its order, its review, its publish job, or why it closed."""
    found: dict[int, Stand] = {}
    for order in orders.listing(db):
        issue = issues.get(db, order.issue)
        job = jobs.live(db, JobKind.PUBLISH, order.issue)
        if issue is not None and issue.state is IssueState.CLOSED:
            code = issue.closed_code or ClosedCode.OTHER
            found[order.issue] = Stand(issue.closed_reason or "closed", code)
        elif order.finished_at is None:
            where = f"on {order.claimed_by}" if order.claimed_by else "queued"
            found[order.issue] = Stand(f"attempt {order.attempt} {where}")
        elif order.review_state is None:
            found[order.issue] = Stand(f"attempt {order.attempt} ended {order.outcome}")
        elif job is not None:
            step = f"{job.step} ({job.detail or job.state})"
            found[order.issue] = Stand(f"accepted; publishing: {step}")
        else:
            found[order.issue] = Stand(f"reviewed: {order.review_state}")
    for shape in shapes.of_open_issues(db).values():
        if shape.issue not in found:
            found[shape.issue] = Stand(f"shaper: {shape.state}")
    return found


def summary(url: str) -> list[Row]:
    rows = []
    with psycopg.connect(url, autocommit=True) as db:
        for sample in demo_data.ALL_ISSUES:
            order = orders.get(db, sample.number)
            stored = bundles.get(db, sample.number)
            earlier = [a.snapshot.get("review_state") for a in orders.history(db, sample.number)]
            verdicts = [v or "-" for v in earlier] + [
                (order.review_state if order else None) or "-"
            ]
            rows.append(
                Row(
                    issue=sample.number,
                    title=sample.issue.title,
                    attempts=order.attempt if order else 0,
                    verdicts=", ".join(verdicts) if order else "",
                    runner=(order.claimed_by if order else None) or "-",
                    commits=commits_in(stored.data) if stored else 0,
                    merged_sha=order.merged_sha if order else None,
                )
            )
    return rows


def commits_in(bundle: bytes) -> int:
    """How many commits a bundle carries (its pack's commit objects)."""
    pack = PackData.from_file(io.BytesIO(parse(bundle).pack), SHA1)
    return sum(1 for obj in pack.iter_unpacked() if obj.pack_type_num == COMMIT_TYPE)
