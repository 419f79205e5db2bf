"""`hive issue`, `hive status` and `hive export` as a user runs them: `python -m hive` in
a subprocess against the real test database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from hive.rules.keys import key_fingerprint
from hive.rules.states import Outcome
from hive.store import endings, orders, runners

from .conftest import World

pytestmark = pytest.mark.live

KEY = "sk-test-never-print-me-4242"


def hive(world: World, *args: str, cwd: Path | None = None, **env: str):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    clean.update(
        {
            "HIVE_DATABASE_URL": world.db_url,
            "HIVE_WORKDIR": str(world.workdir),
            "HIVE_BASE_REF": "main",
            "HIVE_WORKER_KEY": KEY,
            **env,
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "hive", *args],
        env=clean,
        cwd=cwd or world.workdir,
        capture_output=True,
        timeout=120,
    )


def one_line_error(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, done.stderr.decode()
    assert lines[0].startswith("hive: ")
    return lines[0]


def test_issue_add_prints_the_number_and_issue_list_shows_it(world):
    added = hive(
        world,
        "issue",
        "add",
        "--title",
        "Greet",
        "--body",
        "say hi",
        "--label",
        "P1",
        "--boundary",
        "greet.py",
        "--boundary",
        "docs/greet.md",
        "--criterion",
        "it greets",
    )
    assert added.returncode == 0, added.stderr
    assert added.stdout.decode().strip() == "1"
    assert hive(world, "issue", "add", "--title", "Second").stdout.decode().strip() == "2"
    table = hive(world, "issue", "list").stdout.decode()
    assert "Greet" in table and "greet.py" in table and "Second" in table
    rows = json.loads(hive(world, "issue", "list", "--json").stdout)
    assert rows[0]["boundary"] == ["greet.py", "docs/greet.md"]
    assert rows[0]["criteria"] == ["it greets"]
    assert [r["number"] for r in rows] == [1, 2]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--title", " "], "title"),
        (["--title", "t", "--boundary", "../outside"], "boundary[0]"),
        (["--title", "t", "--boundary", "ok.py", "--boundary", "/etc/passwd"], "boundary[1]"),
        (["--title", "t", "--criterion", ""], "criteria[0]"),
    ],
)
def test_issue_add_refuses_a_bad_field_in_one_line(world, args, field):
    done = hive(world, "issue", "add", *args)
    assert done.returncode == 2
    assert one_line_error(done).startswith(f"hive: {field}:")
    assert json.loads(hive(world, "issue", "list", "--json").stdout) == []


def test_status_shows_orders_runners_keys_and_drain_without_the_key(world):
    orders.insert(
        world.db,
        orders.NewOrder(7, "queen-7", "main", key_index=0, key_fingerprint=key_fingerprint(KEY)),
        queued=True,
    )
    runners.register(world.db, "runner-a", 2)
    runners.seen(world.db, "runner-a", running=1, draining=True)
    done = hive(world, "status", "--json", HIVE_PLATFORM_DRAIN_SECONDS="1800")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (order,) = report["orders"]
    assert (order["issue"], order["state"], order["key_index"]) == (7, "queued", 0)
    assert report["runners"][0]["name"] == "runner-a"
    assert report["keys"] == [
        {
            "index": 0,
            "variable": "HIVE_WORKER_KEY",
            "fingerprint": key_fingerprint(KEY),
            "lanes": 1,
            "rests_seconds": 0,
            "rest_reason": None,
        }
    ]
    assert report["drain"]["draining_runners"] == ["runner-a"]
    assert report["drain"]["cap_seconds"] == 1775  # the drain card: 1800 - 25
    table = hive(world, "status").stdout.decode()
    for heading in ("ORDERS", "RUNNERS", "KEYS", "SPEND (UTC day)", "DRAIN"):
        assert heading in table
    assert key_fingerprint(KEY) in table and "runner-a" in table
    assert KEY not in done.stdout.decode() + done.stderr.decode() + table


def test_no_key_value_is_in_any_table_after_the_commands_ran(world):
    hive(world, "issue", "add", "--title", "t")
    orders.insert(
        world.db,
        orders.NewOrder(1, "queen-1", "main", key_index=0, key_fingerprint=key_fingerprint(KEY)),
        queued=True,
    )
    hive(world, "status", "--json")
    hive(world, "export", "1")
    tables = world.db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'hive'"
    ).fetchall()
    dumped = []
    for (name,) in tables:
        query = sql.SQL("SELECT t::text FROM hive.{} AS t").format(sql.Identifier(name))
        dumped += [row[0] for row in world.db.execute(query)]
    assert any(key_fingerprint(KEY) in row for row in dumped)
    assert not [row for row in dumped if KEY in row]


def test_export_writes_the_checkouts_bundle_that_git_fetch_accepts(world, tmp_path):
    head = world.commit_on("queen-7", "fix.txt", "fixed\n")
    world.branch_into_checkout("queen-7")
    done = hive(world, "export", "7", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "from the checkout" in done.stdout.decode()
    assert world.fetch_bundle((tmp_path / "queen-7.bundle").read_bytes(), "queen-7") == head


def test_export_falls_back_to_the_stored_bundle_and_writes_where_asked(world, tmp_path):
    head = world.commit_on("queen-8", "x.txt", "x\n")
    world.store_bundle(8, "queen-8")
    target = tmp_path / "out.bundle"
    done = hive(world, "export", "8", "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert "from the store" in done.stdout.decode()
    assert world.fetch_bundle(target.read_bytes(), "queen-8") == head


def test_export_to_standard_output(world):
    head = world.commit_on("queen-8", "x.txt", "x\n")
    world.store_bundle(8, "queen-8")
    done = hive(world, "export", "8", "-o", "-")
    assert done.returncode == 0
    assert world.fetch_bundle(done.stdout, "queen-8") == head


@pytest.mark.parametrize("issue", ["abc", "-1", "0", "2147483648"])
def test_export_of_a_bad_issue_exits_2_with_one_line(world, issue):
    done = hive(world, "export", issue)
    assert done.returncode == 2
    assert "not a positive integer" in one_line_error(done)


def test_export_of_an_unknown_issue_exits_3_and_of_a_branch_at_base_exits_4(world):
    unknown = hive(world, "export", "404")
    assert unknown.returncode == 3
    assert "nothing is known of issue 404" in one_line_error(unknown)
    new = orders.NewOrder(5, "queen-5", "main")
    assert orders.insert(world.db, new, queued=True) is orders.Insertion.WRITTEN
    orders.claim(world.db, "r")
    endings.end(
        world.db, endings.OrderEnding(orders.Fence(5, new.conversation_id, "r"), Outcome.FINISHED)
    )
    empty = hive(world, "export", "5")
    assert empty.returncode == 4
    assert "no commits beyond base" in one_line_error(empty)


def test_export_to_a_directory_that_does_not_exist_is_one_line(world, tmp_path):
    world.commit_on("queen-8", "x.txt", "x\n")
    world.store_bundle(8, "queen-8")
    done = hive(world, "export", "8", "-o", str(tmp_path / "missing" / "x.bundle"))
    assert done.returncode == 1
    assert "cannot write" in one_line_error(done)


def test_an_unreachable_store_is_one_line_without_the_password(world):
    url = "postgresql://hive:hunter2@127.0.0.1:1/hive"
    done = hive(world, "status", HIVE_DATABASE_URL=url)
    assert done.returncode == 2
    line = one_line_error(done)
    assert "127.0.0.1:1" in line and "unreachable" in line and "hunter2" not in line


def test_an_unmigrated_database_says_to_run_migrate(world, hive_fresh_database):
    done = hive(world, "issue", "list", HIVE_DATABASE_URL=hive_fresh_database())
    assert done.returncode == 1
    assert "run `hive migrate`" in one_line_error(done)


def test_every_verb_has_help(world):
    for verb in (["issue", "add"], ["issue", "list"], ["status"], ["export"]):
        done = hive(world, *verb, "--help")
        assert done.returncode == 0, verb
        assert b"usage: hive" in done.stdout


def test_a_command_leaves_no_connection_behind(world):
    # the commands close their connection: the database has only ours left
    hive(world, "status")
    with psycopg.connect(world.db_url, autocommit=True) as probe:
        count = probe.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        ).fetchone()
    assert count is not None and count[0] <= 2  # this probe and the fixture's connection


def test_status_says_the_sandbox_turns_run_in_and_off_when_it_is_off(world):
    from hive.agents.sandbox_choice import available

    found = json.loads(hive(world, "status", "--json").stdout)
    assert found["sandbox"] == available().value
    off = hive(world, "status", "--json", HIVE_AGENT_SANDBOX="off")
    assert json.loads(off.stdout)["sandbox"] == "off"
    table = hive(world, "status", HIVE_AGENT_SANDBOX="off").stdout.decode()
    assert "SANDBOX\n  off (this machine, these settings)" in table
