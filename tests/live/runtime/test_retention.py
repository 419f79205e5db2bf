"""Retention on real PostgreSQL and a real checkout: 500 orders ended and closed, their
ages pushed past HIVE_RETENTION_DAYS, pruned in small batches; disk use (row counts,
table sizes, the worktree directory, the checkout's packs) before and after, and a second
round of the same work that fits in the room the first one left."""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from dulwich.objects import Blob, Commit, Tree

from hive import configs
from hive.actors.retention import Retention
from hive.git.housekeeping import pack_bytes, queen_branches
from hive.git.storing import store_objects
from hive.git.worktrees import cut_worktree, list_worktrees
from hive.rules.states import Outcome
from hive.store import endings, orders
from hive.store import retention as store
from hive.store.bundles import NewBundle

pytestmark = pytest.mark.live

ORDERS = 500
BATCH_ISSUES = 50
BATCH_ROWS = 1000
LINES_PER_TURN = 40
REPORTS = 3000
TABLES = ("queen_transcript", "queen_dispatch_history", "queen_bundle", "queen_report")
DAY_SECONDS = 86400


@dataclass(frozen=True)
class Disk:
    rows: dict[str, int]
    table_bytes: dict[str, int]
    worktree_bytes: int
    worktrees: int
    pack_bytes: int
    branches: int


def measure(rt: Any) -> Disk:
    with rt.db.connection() as conn:
        conn.execute("ANALYZE")
        rows, sizes = {}, {}
        for table in TABLES:
            rows[table] = conn.execute(f"SELECT count(*) FROM hive.{table}").fetchone()[0]
            sizes[table] = conn.execute(
                "SELECT pg_total_relation_size(%s::regclass)", (f"hive.{table}",)
            ).fetchone()[0]
    repo = rt.checkout.repo
    trees = [w for w in list_worktrees(repo) if w.issue is not None]
    return Disk(
        rows,
        sizes,
        sum(w.size_bytes for w in trees),
        len(trees),
        pack_bytes(repo),
        len(queen_branches(repo)),
    )


def work(rt: Any, first: int, count: int, *, closed_days_ago: float) -> None:
    """`count` issues from `first`, each with an ended order, a bundle, a branch of its own
    with a commit, a worktree, two archived attempts and a transcript; closed."""
    repo = rt.checkout.repo
    base = repo[rt.checkout.base_sha.encode()]
    objects, heads = [], {}
    for n in range(first, first + count):
        blob = Blob.from_string(os.urandom(2048).hex().encode())  # 4 KiB that do not pack down
        tree = Tree()
        tree.add(f"work-{n}.txt".encode(), 0o100644, blob.id)
        commit = Commit()
        commit.tree, commit.parents = tree.id, [base.id]
        commit.author = commit.committer = b"bee <bee@hive>"
        commit.author_time = commit.commit_time = int(time.time())
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = f"work on #{n}\n".encode()
        objects += [blob, tree, commit]
        heads[n] = commit.id
    with rt.checkout.lock:
        store_objects(repo.object_store, objects)
        for n, sha in heads.items():
            repo.refs[f"refs/heads/queen-{n}".encode()] = sha
            cut_worktree(repo, n, rt.checkout.base, rt.checkout.workdir)
    with rt.db.connection() as conn:
        conn.execute(
            "INSERT INTO hive.queen_issue (number, title, state, closed_reason, closed_code,"
            " closed_at) SELECT n, 'issue ' || n, 'closed', 'merged', 'merged',"
            " now() - make_interval(secs => %s)"
            " FROM generate_series(%s::int, %s::int) n",
            (closed_days_ago * DAY_SECONDS, first, first + count - 1),
        )
    for n in range(first, first + count):
        new = orders.NewOrder(issue=n, branch=f"queen-{n}", base="main", brief="do it")
        assert orders.insert(rt.db, new, queued=True) is orders.Insertion.WRITTEN
        claimed = orders.claim(rt.db, "runner-1")
        assert claimed is not None and claimed.issue == n
        bundle = NewBundle(f"queen-{n}", "main", None, heads[n].decode(), os.urandom(4096))
        ending = endings.OrderEnding(claimed.fence, Outcome.FINISHED, bundle=bundle)
        assert endings.end(rt.db, ending).landed
    with rt.db.connection() as conn, conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO hive.queen_transcript (conversation_id, seq, issue, kind, text)"
            " SELECT %s, s, %s, 'say', repeat('the bee says something. ', 8)"
            " FROM generate_series(1, %s) s",
            [(uuid.uuid4(), n, LINES_PER_TURN) for n in range(first, first + count)],
        )
        cur.executemany(
            "INSERT INTO hive.queen_dispatch_history (issue, snapshot)"
            " SELECT %s, jsonb_build_object('attempt', a, 'brief', repeat('brief ', 40))"
            " FROM generate_series(1, 2) a",
            [(n,) for n in range(first, first + count)],
        )


def reports(rt: Any, count: int, days_ago: float) -> None:
    with rt.db.connection() as conn:
        conn.execute(
            "INSERT INTO hive.queen_report (at, headline, body)"
            " SELECT now() - make_interval(secs => %s), 'nothing to dispatch',"
            " repeat('#1: its boundary overlaps #2. ', 10) FROM generate_series(1, %s)",
            (days_ago * DAY_SECONDS, count),
        )


def age_checkout(rt: Any, seconds: float) -> None:
    """Push the worktrees' cut times and the packs' write times `seconds` into the past."""
    repo = rt.checkout.repo
    admins = Path(repo.commondir()) / "worktrees"
    packs = Path(repo.object_store.pack_dir)
    for path in [*admins.glob("*/gitdir"), *packs.iterdir()]:
        then = path.stat().st_mtime - seconds
        os.utime(path, (then, then))


def prune_all(retention: Retention) -> int:
    """Passes until nothing more is due; how many batches they ran."""
    batches = passes = 0
    while True:
        passes += 1
        done = retention.run_once(force=True)
        batches += done.batches
        if not done.more_due:
            return batches
        assert passes < 100


def kept_rows(rt: Any, issue: int) -> tuple[int, int, int]:
    with rt.db.connection() as conn:
        return tuple(
            conn.execute(f"SELECT count(*) FROM hive.{t} WHERE issue = %s", (issue,)).fetchone()[0]
            for t in ("queen_transcript", "queen_dispatch_history", "queen_bundle")
        )


def test_retention_prunes_500_closed_issues_and_the_disk_stays_flat(make_runtime, capsys):
    rt = make_runtime(RETENTION_DAYS="30")
    config = replace(
        configs.retention_config(rt.settings), batch_issues=BATCH_ISSUES, batch_rows=BATCH_ROWS
    )
    # kept: closed only two days ago (1001..1005); open with an order in flight (1006)
    work(rt, 1, ORDERS, closed_days_ago=31)
    work(rt, 1001, 5, closed_days_ago=2)
    work(rt, 1006, 1, closed_days_ago=31)
    with rt.db.connection() as conn:
        conn.execute(
            "UPDATE hive.queen_issue SET state = 'open', closed_at = NULL WHERE number = 1006"
        )
        conn.execute(
            "UPDATE hive.queen_dispatch SET finished_at = NULL, outcome = NULL, outcome_code = NULL"
            " WHERE issue = 1006"
        )
    reports(rt, REPORTS, days_ago=31)
    reports(rt, 100, days_ago=1)
    age_checkout(rt, 2 * 3600)
    before = measure(rt)
    retention = Retention(rt.db, rt.checkout, rt.metrics, config)
    batches = prune_all(retention)
    after = measure(rt)
    with capsys.disabled():
        print(f"\nretention of {ORDERS} closed issues in {batches} batches")
        for table in TABLES:
            print(
                f"  {table}: {before.rows[table]} -> {after.rows[table]} rows,"
                f" {before.table_bytes[table]} -> {after.table_bytes[table]} bytes"
            )
        print(
            f"  worktrees: {before.worktrees} ({before.worktree_bytes} bytes) -> "
            f"{after.worktrees} ({after.worktree_bytes} bytes)"
        )
        print(
            f"  branches: {before.branches} -> {after.branches};"
            f" packs: {before.pack_bytes} -> {after.pack_bytes} bytes"
        )

    # small batches: 500 issues at 50 a batch (and 1,000 lines) is at least ten of them
    assert batches >= ORDERS // BATCH_ISSUES
    assert after.rows["queen_transcript"] == 6 * LINES_PER_TURN
    assert after.rows["queen_dispatch_history"] == 6 * 2
    assert after.rows["queen_bundle"] == 6
    assert after.rows["queen_report"] == 100
    for kept in (1001, 1005, 1006):
        assert kept_rows(rt, kept) == (LINES_PER_TURN, 2, 1)
    assert kept_rows(rt, 1) == kept_rows(rt, ORDERS) == (0, 0, 0)
    assert orders.get(rt.db, 1) is not None  # the order's row and the issue stay
    # the checkout: the worktrees of ended orders go (closed or not), the in-flight one stays
    assert [w.issue for w in list_worktrees(rt.checkout.repo) if w.issue] == [1006]
    assert queen_branches(rt.checkout.repo) == [1001, 1002, 1003, 1004, 1005, 1006]
    assert after.worktree_bytes < before.worktree_bytes / 100
    assert after.pack_bytes < before.pack_bytes / 2
    # nothing more is due for an hour: a pass that is not forced does nothing
    assert not retention.run_once()

    # a second round of the same work fits in the room the first one left (VACUUM, as
    # autovacuum does, marks it reusable): the tables stay near the first round's peak
    # (index pages churn a little), where without retention they would double
    with rt.db.connection() as conn:
        for table in TABLES:
            conn.execute(f"VACUUM hive.{table}")
    work(rt, 2001, ORDERS, closed_days_ago=31)
    reports(rt, REPORTS, days_ago=31)
    again = measure(rt)
    with capsys.disabled():
        print("  after a second round of the same work on the pruned tables:")
        for table in TABLES:
            print(f"  {table}: {again.rows[table]} rows, {again.table_bytes[table]} bytes")
    for table in TABLES:
        assert again.table_bytes[table] <= before.table_bytes[table] * 1.3, table
    age_checkout(rt, 2 * 3600)
    prune_all(retention)
    pruned = measure(rt)
    assert pruned.rows == after.rows
    assert pruned.worktrees == 1
    assert pruned.pack_bytes <= after.pack_bytes * 1.15


def test_one_batch_deletes_at_most_its_limits(make_runtime):
    rt = make_runtime()
    work(rt, 1, 12, closed_days_ago=40)
    cutoff = datetime.now(UTC) - timedelta(days=30)
    first = store.prune_issues(rt.db, cutoff, issues=5, rows=100)
    assert first.issues == 5 and first.transcript_lines == 100 and first.history_rows == 10
    assert first.bundles == 5 and first.full(5, 100)
    total = first.transcript_lines
    while True:
        batch = store.prune_issues(rt.db, cutoff, issues=5, rows=100)
        assert batch.transcript_lines <= 100 and batch.issues <= 5
        total += batch.transcript_lines
        if not batch.full(5, 100):
            break
    assert total == 12 * LINES_PER_TURN
    assert store.prune_issues(rt.db, cutoff, issues=5, rows=100).issues == 0


def test_an_issue_closed_inside_the_window_or_reopened_keeps_everything(make_runtime):
    rt = make_runtime()
    work(rt, 1, 2, closed_days_ago=29.9)
    work(rt, 3, 1, closed_days_ago=45)
    with rt.db.connection() as conn:
        conn.execute(
            "UPDATE hive.queen_issue SET state = 'open', closed_at = NULL WHERE number = 3"
        )
    cutoff = datetime.now(UTC) - timedelta(days=30)
    assert store.prune_issues(rt.db, cutoff).issues == 0
    assert store.retired_issues(rt.db, cutoff, [1, 2, 3]) == []
    for n in (1, 2, 3):
        assert kept_rows(rt, n) == (LINES_PER_TURN, 2, 1)


def test_hive_retention_days_sets_the_window(make_runtime):
    rt = make_runtime(RETENTION_DAYS="60")
    work(rt, 1, 2, closed_days_ago=45)
    reports(rt, 10, days_ago=45)
    done = Retention(
        rt.db, rt.checkout, rt.metrics, configs.retention_config(rt.settings)
    ).run_once(force=True)
    assert done.transcript_lines == done.reports == 0
    assert kept_rows(rt, 1) == (LINES_PER_TURN, 2, 1)
