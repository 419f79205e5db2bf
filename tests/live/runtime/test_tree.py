"""The whole tree in-process (`hive.testing.hive_tree`): its children by role, an issue
run to its end, the drain holding a bee and exiting after it, the hand-back at the cap,
a Queen and a runner in two trees, and the exit with no bees."""

from __future__ import annotations

import logging
import urllib.error
import urllib.request

import psycopg
import pytest

from hive.actors.messages import QUEEN, TreeStarted
from hive.git.repo import open_checkout
from hive.rules.drain import WK_BEE
from hive.services import issues as issue_service
from hive.settings import Settings
from hive.store import bundles, issues, orders, runners
from hive.store.issues import NewIssue
from hive.testing import hive_environ, wait_for_ending, wait_for_row
from hive.tree import build
from tests.live.runtime import agents
from tests.live.runtime.conftest import AGENT, eventually

EXIT_SECONDS = 60.0  # a deadline for the tree's exit, not a measure of it


def add(hive, number: int, path: str = "src/app.py") -> None:
    issues.upsert(hive.runtime.db, number, NewIssue(title=f"issue {number}", boundary=(path,)))
    hive.issues_changed()  # a round now, not at the tick


def shape(root) -> list[str]:
    ids = []
    for child in root.which_children():
        ids.append(child.id)
        if child.id == "runner":
            ids += [f"runner/{c.id}" for c in child.target.which_children()]
    return ids


def test_children_by_role_in_start_order(hive_tree):
    cases = [
        (
            {},
            [
                *("http", "reaper", "queen", "reviewer", "jobs", "retention"),
                *("runner", "runner/host", "runner/bees", "runner/claimer", "drain"),
            ],
        ),
        (
            {"ROLE": "queen"},
            [
                "http",
                "reaper",
                "queen",
                "reviewer",
                "jobs",
                "retention",
                "runner",
                "runner/host",
                "runner/bees",
                "drain",
            ],
        ),
        (
            {"ROLE": "queen", "QUEEN_BEES_RUN_ELSEWHERE": "on"},
            ["http", "reaper", "queen", "reviewer", "jobs", "retention", "drain"],
        ),
        (
            {"ROLE": "runner"},
            ["http", "reaper", "runner", "runner/host", "runner/bees", "runner/claimer", "drain"],
        ),
        (
            {"ROLE": "queen", "QUEEN_BEES_RUN_ELSEWHERE": "on", "SHAPER_AGENT": "demo"},
            ["http", "reaper", "queen", "reviewer", "shaper", "jobs", "retention", "drain"],
        ),
    ]
    for variables, expected in cases:
        assert shape(hive_tree(AGENT + "finish", **variables).root) == expected


@pytest.mark.through_pgbouncer
def test_the_tree_runs_an_issue_to_its_end(hive_tree):
    hive = hive_tree(AGENT + "finish")
    add(hive, 1)
    order = wait_for_ending(hive.runtime.db, 1)
    assert order.outcome == "finished"
    assert bundles.get(hive.runtime.db, 1) is not None


def test_with_no_bees_the_drain_waits_for_nothing_and_exits(hive_tree, caplog):
    # how fast (issue 6: under 2 s) is `hive bench drain`'s to measure
    caplog.set_level(logging.INFO, logger="hive.drain")
    hive = hive_tree(AGENT + "finish")
    hive.drain()
    reason = hive.root.wait(EXIT_SECONDS)
    assert reason is not None and reason.normal
    summaries = [r.getMessage() for r in caplog.records if r.getMessage().startswith("drain: cap")]
    assert len(summaries) == 1
    # the Queen's rounds are left to the store: the next process rounds again
    assert summaries[0].endswith(
        "held at start 0, ended on their own 0, handed back 0, stopped 0, left 1"
    )


def test_the_drain_holds_a_bee_and_the_tree_exits_once_it_ended(hive_tree):
    hive = hive_tree(AGENT + "until_released")
    add(hive, 2)
    eventually(lambda: hive.runtime.host.running() == 1)
    hive.drain()
    eventually(lambda: hive.runtime.work.draining)
    try:
        urllib.request.urlopen(hive.server.url + "/readyz", timeout=5)
        raise AssertionError("ready while draining")
    except urllib.error.HTTPError as err:
        assert err.code == 503
    assert hive.root.wait(0.5) is None  # held
    agents.RELEASE.set()
    reason = hive.root.wait(30)
    assert reason is not None and reason.normal
    assert orders.get(hive.runtime.db, 2).outcome == "finished"  # type: ignore[union-attr]


def test_at_the_cap_the_bee_is_handed_back_and_the_tree_exits(hive_tree):
    hive = hive_tree(AGENT + "until_stopped", RUNNER_DRAIN_SECONDS="1")
    add(hive, 3)
    eventually(lambda: any(i.kind == WK_BEE for i in hive.runtime.work.items()))
    hive.drain()
    reason = hive.root.wait(30)
    assert reason is not None and reason.normal
    order = orders.get(hive.runtime.db, 3)
    assert order is not None and order.outcome == "handed back"
    assert hive.runtime.metrics.handed_back._value.get() == 1


@pytest.mark.through_pgbouncer
def test_a_queen_and_a_runner_in_two_trees_share_the_work_through_the_store(hive_tree):
    queen = hive_tree(
        AGENT + "finish", ROLE="queen", QUEEN_BEES_RUN_ELSEWHERE="on", QUEEN_TICK_SECONDS="30"
    )
    runner = hive_tree(AGENT + "finish", ROLE="runner", RUNNER_SECONDS="30")
    add(queen, 4, "src/app.py")
    add(queen, 5, "src/util.py")
    # the ticks and polls are 30 s: only the NOTIFYs can make this quick
    first = wait_for_ending(queen.runtime.db, 4, timeout_seconds=20)
    assert first.claimed_by == runner.settings.runner_name and first.outcome == "finished"
    second = wait_for_ending(queen.runtime.db, 5, timeout_seconds=20)
    assert second.claimed_by == runner.settings.runner_name


@pytest.mark.through_pgbouncer
def test_an_issue_added_by_another_process_wakes_the_queen_and_is_queued_at_once(
    hive_tree, hive_db_url
):
    queen = hive_tree(
        AGENT + "finish", ROLE="queen", QUEEN_BEES_RUN_ELSEWHERE="on", QUEEN_TICK_SECONDS="60"
    )
    runner = hive_tree(AGENT + "finish", ROLE="runner", RUNNER_SECONDS="60")
    # her first round (at start) is over, so only her LISTEN can bring the next one soon
    wait_for_row(hive_db_url, "SELECT 1 FROM hive.queen_report", ())
    with psycopg.connect(hive_db_url, autocommit=True) as cli:  # as `hive issue add` does
        number = issue_service.add(cli, NewIssue(title="from the CLI", boundary=("src/util.py",)))
    # the tick and the poll are 60 s: only the NOTIFYs can make this quick
    ended = wait_for_ending(queen.runtime.db, number, timeout_seconds=20)
    assert ended.claimed_by == runner.settings.runner_name and ended.outcome == "finished"


def test_the_queen_is_woken_once_every_child_is_up(hive_db_url, hive_repo, tmp_path):
    # her first round may run before the bee pool is up and start nothing; the tree's
    # start must wake her then, or an issue waits for her next tick
    env = hive_environ(hive_db_url, hive_repo, tmp_path / "w", QUEEN_TICK_SECONDS="30")
    settings = Settings.from_env(env)
    hive = build(settings, hive_db_url, open_checkout(str(hive_repo), tmp_path / "w", "main"))
    names = hive.runtime.names
    told: list[tuple[str, object, bool]] = []
    tell = names.tell

    def recording(name: str, message: object) -> bool:
        told.append((name, message, hive.runtime.host.ready))
        return tell(name, message)

    names.tell = recording  # type: ignore[method-assign]
    hive.start()
    try:
        assert (QUEEN, TreeStarted(), True) in told
    finally:
        hive.stop(timeout=30)


def test_a_draining_runner_says_so_in_queen_runner_at_once(hive_tree):
    hive = hive_tree(AGENT + "until_released", RUNNER_SECONDS="30")
    add(hive, 7)
    eventually(lambda: hive.runtime.host.running() == 1)
    hive.drain()

    def says_draining() -> bool:
        rows = [r for r in runners.listing(hive.runtime.db) if r.name == hive.settings.runner_name]
        return bool(rows) and rows[0].draining

    # within the 30 s heartbeat: only the drain's own write can have said it
    eventually(says_draining, timeout_seconds=20)
    agents.RELEASE.set()


def checkout_of(repo, workdir):
    return open_checkout(str(repo), workdir, "main")


def test_a_tree_stopped_before_its_start_or_twice_stops_cleanly(hive_db_url, hive_repo, tmp_path):
    env = hive_environ(hive_db_url, hive_repo, tmp_path / "w")
    never = build(Settings.from_env(env), hive_db_url, checkout_of(hive_repo, tmp_path / "w"))
    reason = never.stop(timeout=5)
    assert reason is not None and reason.normal
    hive = build(Settings.from_env(env), hive_db_url, checkout_of(hive_repo, tmp_path / "w"))
    hive.root.start()
    hive.root.stop()
    reason = hive.root.stop()  # twice: the same answer
    assert reason is not None and reason.normal
    hive.close()
