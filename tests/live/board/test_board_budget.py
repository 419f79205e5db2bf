"""A process with a board open keeps to its connection budget (hive.rules.connections),
counted by PostgreSQL itself under the process's application_name: the board listens on
the process's one LISTEN connection (hive.store.listen), beside the claimer. When that
connection is killed, it is made again, the board's stream gets a snapshot and the
events go on."""

from __future__ import annotations

import psycopg

from hive.rules.connections import IDLE_CONNECTIONS
from hive.store import issues
from hive.store.issues import NewIssue
from hive.swarm import wait_for
from tests.budget import held, most_held

from .sse import Stream

START_SECONDS = 30.0
# looks at pg_stat_activity while the stream is open (each a round trip)
SAMPLES = 20


def test_a_runner_with_a_board_open_holds_its_idle_budget_and_its_board_outlives_a_killed_listen(
    hive_tree, hive_db_url
):
    hive = hive_tree("demo", ROLE="runner")
    name = f"hive-{hive.settings.runner_name}"
    with psycopg.connect(hive_db_url, autocommit=True) as db:
        wait_for(lambda: held(db, name)[1] == 1, START_SECONDS, "the claimer LISTENs")
        stream = Stream(hive.server.port, "/board/events")
        try:
            assert stream.status == 200
            assert stream.next().name == "snapshot"
            issues.upsert(db, 1, NewIssue(title="watched"))
            stream.until(lambda e: e.name == "card" and "watched" in e.data)

            # no bee runs: the pool's one connection and the one LISTEN, the board's in it
            assert most_held(db, name, SAMPLES) <= IDLE_CONNECTIONS
            assert held(db, name)[1] == 1

            killed = db.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s AND query ILIKE '%%LISTEN %%'",
                (name,),
            ).fetchall()
            assert killed == [(True,)]
            # what was sent while it was away is lost: the stream starts afresh
            assert stream.next().name == "snapshot"
            issues.upsert(db, 2, NewIssue(title="after the kill"))
            stream.until(lambda e: e.name == "card" and "after the kill" in e.data)

            wait_for(lambda: held(db, name)[1] == 1, START_SECONDS, "one LISTEN again")
            assert most_held(db, name, SAMPLES) <= IDLE_CONNECTIONS
        finally:
            stream.close()


def test_a_queen_running_her_own_bees_with_a_board_open_holds_her_idle_budget(
    hive_tree, hive_db_url
):
    # nothing of hers listens but the board: its LISTEN is still within her budget
    hive = hive_tree("demo", ROLE="queen")
    name = f"hive-{hive.settings.runner_name}"
    with psycopg.connect(hive_db_url, autocommit=True) as db:
        stream = Stream(hive.server.port, "/board/events")
        try:
            assert stream.status == 200
            assert stream.next().name == "snapshot"
            issues.upsert(db, 1, NewIssue(title="watched by her"))
            stream.until(lambda e: e.name == "card" and "watched by her" in e.data)
            assert held(db, name)[1] == 1
            assert most_held(db, name, SAMPLES) <= IDLE_CONNECTIONS
        finally:
            stream.close()
