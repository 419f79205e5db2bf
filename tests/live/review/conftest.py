"""Finished work to review: a runner's clone commits on `queen-<n>`, the bundle and a
finished order are in the store, and the Queen's clone has never seen the branch."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from dulwich.repo import Repo

from hive.git.bundles import bundle
from hive.git.commits import commit_staged
from hive.git.repo import Checkout, open_checkout
from hive.git.worktrees import cut_worktree
from hive.store.pool import make_pool


@dataclass
class Finished:
    issue: int
    conversation_id: uuid.UUID
    head_sha: str | None


@pytest.fixture
def queen_checkout(hive_repo: Path, tmp_path: Path) -> Iterator[Checkout]:
    checkout = open_checkout(str(hive_repo), tmp_path / "queen", "main")
    yield checkout
    checkout.repo.close()


@pytest.fixture
def db(hive_db_url: str, hive_work_url: str) -> Iterator[Any]:
    """The Queen's store: `hive_work_url` (PgBouncer's when the test runs through it)."""
    prepare = hive_work_url == hive_db_url
    pool = make_pool(hive_work_url, max_size=4, name=f"t-{uuid.uuid4().hex[:6]}", prepare=prepare)
    yield pool
    pool.close()


@pytest.fixture
def finished_work(hive_db_url: str, hive_repo: Path, tmp_path: Path) -> Callable[..., Finished]:
    """`finished_work(n, files, criteria=[...])`: issue n with these criteria, its work
    (`files`: path -> text, committed on queen-n in a runner's clone; {} commits
    nothing) bundled and its order ended `finished`."""
    runner = open_checkout(str(hive_repo), tmp_path / "runner", "main")

    def make(
        number: int,
        files: dict[str, str],
        criteria: list[str],
        *,
        sendbacks: int = 0,
        boundary: tuple[str, ...] = ("docs",),
        then: Callable[[Repo, int], None] | None = None,
    ) -> Finished:
        """`then(repo, number)` may move queen-<number> in the runner's clone after
        the commit, before the bundle (an agent's own hostile commit, say)."""
        cut = cut_worktree(runner.repo, number, "main", runner.workdir)
        for path, text in files.items():
            (cut.path / path).parent.mkdir(parents=True, exist_ok=True)
            (cut.path / path).write_text(text)
        head: str | None = None
        out = None
        if files:
            wt = Repo(str(cut.path))
            wt.get_worktree().stage(list(files))
            commit_staged(wt, f"work on #{number}\n", b"bee <bee@hive.invalid>")
            wt.close()
            if then is not None:
                then(runner.repo, number)
            out = bundle(runner.repo, number, "main", 10_000_000)
            assert out is not None
            head = out.head_sha
        conversation = uuid.uuid4()
        with psycopg.connect(hive_db_url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO hive.queen_issue (number, title, body, boundary, criteria)"
                " VALUES (%s, %s, '', %s, %s)",
                (number, f"issue {number}", list(boundary), json.dumps(criteria)),
            )
            conn.execute(
                "INSERT INTO hive.queen_dispatch (issue, branch, base, base_sha, started,"
                " conversation_id, owned_paths, finished_at, outcome, outcome_code, sendbacks)"
                " VALUES (%s, %s, 'main', %s, true, %s, %s, now(), 'finished', 'finished', %s)",
                (
                    number,
                    f"queen-{number}",
                    runner.base_sha,
                    conversation,
                    list(boundary),
                    sendbacks,
                ),
            )
            if out is not None:
                conn.execute(
                    "INSERT INTO hive.queen_bundle (issue, branch, base, base_sha, head_sha,"
                    " bytes, size) VALUES (%s, %s, 'main', %s, %s, %s, %s)",
                    (
                        number,
                        f"queen-{number}",
                        out.base_sha,
                        out.head_sha,
                        out.data,
                        len(out.data),
                    ),
                )
        return Finished(number, conversation, head)

    yield make
    runner.repo.close()
