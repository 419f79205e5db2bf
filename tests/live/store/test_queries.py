import re
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

import hive.store
from hive.rules.states import Outcome
from hive.store import endings, orders, spend
from hive.store.sql import QUERIES

# a sample value for every parameter name the catalogue uses
SAMPLES = {
    "key": 1,
    "delivery_id": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    "keep_days": 7,
    "forge_updated_at": datetime(2026, 12, 2, 5, 0, tzinfo=UTC),
    "version": 9999,
    "name": "sample",
    "issue": 1,
    "number": 1,
    "branch": "queen-1",
    "base": "main",
    "base_sha": None,
    "head_sha": "0" * 40,
    "detail": None,
    "conversation_id": uuid.uuid4(),
    "owned_paths": ["a.py"],
    "key_index": 0,
    "key_fingerprint": "0" * 16,
    "brief": "brief",
    "queued": True,
    "provider": None,
    "model": None,
    "runner": "r1",
    "outcome": "finished",
    "outcome_code": "finished",
    "inherited": False,
    "reaper": "stalled",
    "older_than_seconds": 60.0,
    "input_tokens": None,
    "output_tokens": None,
    "salvaged_sha": "1" * 40,
    "salvaged_files": ["a.py"],
    "bytes": b"bundle",
    "size": 6,
    "spare": [],
    "silent_seconds": 600.0,
    "stall_seconds": 7200.0,
    "unfinished_only": False,
    "title": "t",
    "body": "",
    "labels": [],
    "boundary": [],
    "criteria": Jsonb([]),
    "blocked_by": [],
    "open_only": True,
    "open_issues": [1],
    "held_since": datetime(2026, 12, 2, 5, 0, tzinfo=UTC),
    "floor_states": [4],
    "state": "open",
    "slots": 1,
    "running": 0,
    "running_jobs": [],
    "draining": False,
    "holder": "h",
    "ttl_seconds": 180.0,
    "fence": 1,
    "lease_name": "queen",
    "lease_holder": "h",
    "lease_fence": 1,
    "headline": "h",
    "needs_you": False,
    "limit": 5,
    "kind": "say",
    "text": "hello",
    "max_chars": 10,
    "after": 0,
    "count": 3,
    "failed_codes": ["ended_badly"],
    "review_state": "accept",
    "merge_sha": "2" * 40,
    "check_result": "pass",
    "check_job": None,
    "exit_code": 0,
    "seconds": 1.5,
    "output_tail": "ok",
    "by": "ada",
    "note": "n",
    "pause_seconds": 0,
    "from_states": [3, 4],
    "replaceable": [2, 6, 9, 10, 11],
    "in_flight": [0, 1],
    "started": True,
    "finished_at": None,
    "job": 1,
    "epoch": 1,
    "step": "checks",
    "attempt": 1,
    "args": Jsonb({}),
    "batch": 32,
    "job_state": "done",
    "effect_key": "merge",
    "result": Jsonb({"sha": "0" * 40}),
    "owner": "job:1",
    "wait_key": "approve:1",
    "wake_in_seconds": 60,
    "payload": None,
    "wait_id": 1,
    "judged_state": 6,
    "note_kept_from": 6,
    # a person's verbs (people.sql)
    "reason": "closed by hand",
    "blocker": 2,
    "start": 2,
    "target": 1,
    "max_depth": 8,
    "pattern": "#1(?![0-9])",
    "days": 30,
    "conversations": [uuid.uuid4()],
    "seqs": [0],
    # the GitHub forge (forge.sql)
    "subject": "issue:1",
    "remote_id": 1,
    # a conversation kept with its order (conversations.sql)
    "agent": "claude",
    "session_id": "session-1",
    "keeps_conversation": True,
    "conversation_bytes": b"session",
    "bundle": True,
    "conversation": True,
    # spend and key rests (spend.sql, keyrests.sql)
    "cost_usd": 0.25,
    "cost_source": "agent",
    "since": datetime(2026, 1, 1, tzinfo=UTC),
    "strikes": 1,
    "ends_rest": True,
    "rests_until": datetime(2026, 1, 1, tzinfo=UTC),
    # the board (board.sql)
    "issues": [1],
    "closed_max": 10,
    "said_max_chars": 10,
    # retention.sql
    "cutoff": datetime(2026, 1, 1, tzinfo=UTC),
    "batch_issues": 50,
    "batch_rows": 1000,
    "numbers": [1, 2],
    "batch_jobs": 100,
    "job_states": ["done", "failed", "cancelled"],
    "wait_states": [1, 2, 3],
    "failures": 0,
    "problem": "no boundary",
    # credits (the sample account and its lot are made before the queries run)
    "account": "team",
    "accounts": ["team"],
    "credit_account": "team",
    "credit_markup": 2,
    "key_owner": "alice",
    "tokens": 5,
    "at": datetime(2026, 1, 1, tzinfo=UTC),
    "burns_at": datetime(2026, 1, 31, tzinfo=UTC),
    "now": datetime(2026, 2, 1, tzinfo=UTC),
    "turn": "bee:sample",
    "cost_micros": 2500,
    "markup": 2,
    "overdrawn": 0,
    "lot": 1,
    # the chat (chat.sql)
    "cause": "answer:queen:$event",
    "bot": "queen",
    "message_kind": 0,
    "depth": 1,
    "reply_to": "$event",
    "thread_root": None,
    "asked": "@queen why #1?",
    "asked_at": datetime(2026, 1, 1, tzinfo=UTC),
    "row_id": 1,
    "hold_seconds": 330.0,
    "tries": 1,
    "room": "#hive:hive.test",
    "next_batch": "s1_2_3",
    "moves_since": datetime(2026, 1, 1, tzinfo=UTC),
    "event_id": "$answer",
}
_PARAM = re.compile(r"%\((\w+)\)s")
# queries whose parameters are arrays of the samples' kinds (one element an ending)
WHOLE = {
    "end_orders": endings.end_many_params(
        [endings.OrderEnding(orders.Fence(1, uuid.uuid4(), "r1"), Outcome.FINISHED)]
    ),
    "add_turn_spend": spend.TurnSpend(
        spend.REVIEW, 1, uuid.uuid4(), 0, 1, 2, 0.5, "agent"
    ).__dict__,
}


def test_every_named_query_runs_against_a_real_postgresql(hive_db_url):
    assert len(QUERIES) >= 30
    with psycopg.connect(hive_db_url) as conn:
        conn.execute("INSERT INTO hive.queen_issue (number, title) VALUES (1, 'sample')")
        conn.execute("INSERT INTO hive.queen_credit_account (account) VALUES ('team')")
        conn.execute(
            "INSERT INTO hive.queen_credit_ledger (account, kind, tokens, burns_at)"
            " VALUES ('team', 'grant', 5, now())"  # lot 1, the sequence's first
        )
        conn.commit()
        for query in QUERIES.values():
            params = WHOLE.get(query.name) or {
                name: SAMPLES[name] for name in _PARAM.findall(query.text)
            }
            with conn.transaction(force_rollback=True):
                conn.execute(query.text, params or None)


def test_every_query_has_a_one_line_comment_and_names_its_schema():
    for query in QUERIES.values():
        assert query.doc and "\n" not in query.doc, query.name
        if "FROM " in query.text or "INTO " in query.text or "UPDATE " in query.text:
            assert "hive." in query.text or "pg_catalog." in query.text, query.name


def test_every_query_the_store_names_is_in_the_catalogue():
    folder = Path(hive.store.__file__).parent
    used: set[str] = set()
    for module in folder.glob("*.py"):
        text = module.read_text()
        used |= set(re.findall(r'(?:q|one|dicts)\((?:db, )?"(\w+)"', text))
    assert used, "the pattern found no query names"
    assert used <= set(QUERIES)
