import os
import subprocess
import sys
from typing import Any

import psycopg
import pytest

from hive.errors import HiveError
from hive.store import migrate, orders
from hive.store.orders import NewOrder

from . import workers
from .conftest import Child, finish, ready_then_go, running

# DESIGN 4's tables with the columns each must have (more are allowed)
DESIGN_COLUMNS = {
    "queen_issue": "number title body labels boundary criteria state blocked_by created_at"
    " updated_at",
    "queen_dispatch": "issue branch base base_sha started detail conversation_id owned_paths"
    " key_index key_fingerprint brief queued_at claimed_by claimed_at refused_by dispatched_at"
    " finished_at outcome salvaged_at salvaged_sha salvaged_files review_state review_note"
    " reviewed_at sendbacks provider model input_tokens output_tokens attempt",
    "queen_dispatch_history": "id issue archived_at snapshot",
    "queen_bundle": "issue branch base base_sha head_sha runner bytes size created_at",
    "queen_transcript": "conversation_id seq issue at kind text",
    "queen_runner": "name started_at seen_at slots running draining",
    "queen_lease": "name holder fence expires_at",
    "queen_report": "at headline body needs_you",
    "queen_wait": "key wake_at state epoch claimed_by claim_due_at",
    "queen_job": "step state epoch claimed_by claim_due_at",
    "queen_effect": "job effect_key done",
}


def _columns(url: str) -> dict[str, set[str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'hive'"
        ).fetchall()
    found: dict[str, set[str]] = {}
    for table, column in rows:
        found.setdefault(table, set()).add(column)
    return found


def test_a_fresh_database_without_the_schema_gets_every_table_and_column(hive_fresh_database):
    url = hive_fresh_database()
    assert migrate.apply(url) == list(range(1, migrate.known_version() + 1))
    found = _columns(url)
    for table, columns in DESIGN_COLUMNS.items():
        assert set(columns.split()) <= found.get(table, set()), table


# 0007: spend and key rests (lesson modules 6 and 7)
SPEND_COLUMNS = {
    "queen_dispatch": "cost_usd cost_source",
    "queen_key_rest": "key_index key_fingerprint strikes rests_until reason updated_at",
}


def test_spend_and_key_rests_get_their_columns(hive_db_url):
    found = _columns(hive_db_url)
    for table, columns in SPEND_COLUMNS.items():
        assert set(columns.split()) <= found.get(table, set()), table


# 0003: what review, checks, the merge gate and publishing need (DESIGN 10)
SECOND_HALF_COLUMNS = {
    "queen_issue": "closed_reason closed_at",
    "queen_dispatch": "review_pause_seconds review_visits merged_sha merged_at approved_at"
    " approved_by",
    "queen_check": "id issue attempt job name result exit_code seconds output_tail merge_sha at",
    "queen_job": "detail attempt",
}


def test_the_second_half_gets_its_columns_and_one_live_job_per_kind_and_issue(hive_db_url):
    found = _columns(hive_db_url)
    for table, columns in SECOND_HALF_COLUMNS.items():
        assert set(columns.split()) <= found.get(table, set()), table
    insert = (
        "INSERT INTO hive.queen_job (kind, issue, step, state) VALUES ('publish', 1, 'checks', %s)"
    )
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute(insert, ("done",))
        conn.execute(insert, ("done",))
        conn.execute(insert, ("ready",))
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(insert, ("parked",))
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO hive.queen_check (issue, attempt, name, result, output_tail)"
                " VALUES (1, 1, 'unit', 'pass', repeat('x', 4001))"
            )


def test_applying_twice_applies_nothing_and_check_reports_the_version(hive_fresh_database):
    url = hive_fresh_database()
    assert migrate.check(url) == 0
    migrate.apply(url)
    assert migrate.apply(url) == []
    assert migrate.check(url) == migrate.known_version()


def test_a_search_path_without_hive_still_migrates_and_serves(hive_fresh_database):
    url = psycopg.conninfo.make_conninfo(hive_fresh_database(), options="-c search_path=public")
    assert migrate.apply(url) == list(range(1, migrate.known_version() + 1))
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SHOW search_path").fetchone() == ("public",)
        orders.insert(conn, NewOrder(7, "queen-7", "main"), queued=True)
        claimed = orders.claim(conn, "r1")
    assert claimed is not None and claimed.issue == 7


def _migrate_at_once(url: str, conn: Any) -> None:
    conn.send(workers.READY)
    workers.wait_for(conn, workers.GO)
    conn.send(migrate.apply(url))


def test_two_concurrent_migrates_apply_each_version_once(hive_fresh_database):
    url = hive_fresh_database()
    children = [Child(_migrate_at_once, url, name=f"migrate-{n}") for n in "ab"]
    with running(children):
        ready_then_go(children, 60)
        got = [child.receive(60) for child in children]
        finish(children, 30)
    # each version lands once, by either (the lock is taken per migration)
    assert sorted(got[0] + got[1]) == list(range(1, migrate.known_version() + 1))


def _from_the_future(url: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO hive.schema_version (version, name) VALUES (99, 'future')")


def test_a_schema_newer_than_the_code_is_refused_naming_its_version(hive_db_url):
    _from_the_future(hive_db_url)
    with pytest.raises(HiveError, match="version 99"):
        migrate.check(hive_db_url)
    with pytest.raises(HiveError, match="version 99"):
        migrate.apply(hive_db_url)


def _hive(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "hive", *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_hive_migrate_prints_the_versions_it_applied(hive_fresh_database):
    url = hive_fresh_database()
    first, second = _hive(url, "migrate"), _hive(url, "migrate")
    last = migrate.known_version()
    applied = ", ".join(f"{v:04d}" for v in range(1, last + 1))
    assert (first.returncode, first.stdout.strip()) == (0, f"applied {applied}")
    assert (second.returncode, second.stdout.strip()) == (
        0,
        f"schema is current (version {last:04d})",
    )


def test_hive_migrate_refuses_a_newer_schema_in_one_line(hive_db_url):
    _from_the_future(hive_db_url)
    done = _hive(hive_db_url, "migrate")
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "version 99" in done.stderr


def test_hive_migrate_names_an_unreachable_host_and_port_but_never_the_password():
    done = _hive("postgresql://hive:s3cret@127.0.0.1:1/hive", "migrate")
    assert done.returncode == 2
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "127.0.0.1:1" in line and "s3cret" not in line
