"""The whole second half in one process on a real PostgreSQL: a bee's finished work is
reviewed, checked, merged into the repository's main and its issue closed; zero checks
wait for a person. Checked with the git binary."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hive.store import publish
from hive.testing import git, wait_for_merge, wait_for_row

pytestmark = pytest.mark.live


def _issue(url: str, number: int, body: str, criteria: list[str], boundary: list[str]) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO hive.queen_issue (number, title, body, boundary, criteria)"
            " VALUES (%s, %s, %s, %s, %s)",
            (number, f"issue {number}", body, boundary, json.dumps(criteria)),
        )


def test_an_issue_goes_from_a_bee_to_merged_on_main_and_closed(
    hive_tree: Callable[..., Any], hive_db_url: str, hive_repo: Path
) -> None:
    _issue(
        hive_db_url,
        1,
        "write `docs/notes.md`: reviewed and merged",
        ["file `docs/notes.md` contains `merged`"],
        ["docs/notes.md"],
    )
    hive = hive_tree("demo", CHECK_NOTES="grep -q merged docs/notes.md")
    sha = wait_for_merge(hive_db_url, 1)
    assert git("rev-parse", "main", cwd=hive_repo) == sha
    assert git("show", "main:docs/notes.md", cwd=hive_repo) == "reviewed and merged"
    git("fsck", "--strict", cwd=hive_repo)
    reason = wait_for_row(hive_db_url, "SELECT closed_reason FROM hive.queen_issue", ())
    assert reason == (f"merged as {sha}",)
    registry = hive.runtime.metrics.registry
    assert registry.get_sample_value("hive_reviews_total", {"verdict": "accept"}) == 1
    assert registry.get_sample_value("hive_checks_total", {"check": "notes", "result": "pass"}) == 1
    assert registry.get_sample_value("hive_merges_total") == 1


def test_with_zero_checks_accepted_work_waits_for_a_person(
    hive_tree: Callable[..., Any], hive_db_url: str, hive_repo: Path
) -> None:
    _issue(
        hive_db_url,
        2,
        "write `docs/notes.md`: approved",
        ["file `docs/notes.md` contains `approved`"],
        ["docs/notes.md"],
    )
    before = git("rev-parse", "main", cwd=hive_repo)
    hive = hive_tree("demo")
    wait_for_row(
        hive_db_url,
        "SELECT id FROM hive.queen_job WHERE issue = 2 AND state = 'parked' AND step = 'gate'",
        (),
    )
    assert git("rev-parse", "main", cwd=hive_repo) == before
    assert publish.approve(hive.runtime.db, 2, "ada")
    sha = wait_for_merge(hive_db_url, 2)
    assert git("show", f"{sha}:docs/notes.md", cwd=hive_repo) == "approved"
