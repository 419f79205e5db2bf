"""chat: a person's mention to the bot's answer in a real Matrix room, and the room's
rate under a flood of mentions, against the clocks.

A throwaway Synapse (`hive.bench.homeserver`, the `test` extra) and a scratch database;
the hive's chat loop (`hive.chat.room.Room` in its actor) with the Queen and the
reviewer. Latency: one mention at a time, alternately to each (clocks off), timed from
the send to the person's sync seeing the answer. Flood: `--flood` mentions at once under
`--gap` and `--per-minute`; the bot messages' server times give the busiest minute, each
bot's shortest gap, and how long the last answer took. Nothing is dropped, nothing sent
twice.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hive.actors.chat import ChatActor
from hive.actors.chat_turns import ChatTurnsActor
from hive.agents import confine
from hive.agents.launch import Launch
from hive.bench.arguments import whole
from hive.bench.homeserver import Homeserver, User
from hive.chat.config import QUEEN, REVIEWER, BotToken, ChatConfig
from hive.chat.matrix import MatrixClient
from hive.chat.room import Room
from hive.chat.turns import ChatTurns, TurnsConfig
from hive.git.commits import init_repository
from hive.git.repo import open_checkout
from hive.metrics import HiveMetrics
from hive.rules.chat import Clocks
from hive.settings import Settings
from hive.store import chat as store
from hive.store import connect, pool, scratch
from supervisors import Registry

WAIT_SECONDS = 600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--samples", type=whole(1, 10_000), default=40, help="mentions timed (40)")
    parser.add_argument(
        "--flood", type=whole(1, 10_000), default=100, help="mentions at once (100)"
    )
    parser.add_argument("--gap", type=float, default=0.5, help="the flood's gap per bot, s (0.5)")
    parser.add_argument(
        "--per-minute", type=whole(1, 600), default=50, help="the flood's room cap (50)"
    )
    parser.add_argument(
        "--bee-samples", type=whole(0, 10_000), default=10, help="a bee's mentions timed (10)"
    )
    parser.add_argument(
        "--bee-turn-seconds", type=float, default=0.5, help="the bee's turn sleeps this, s (0.5)"
    )


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    url = connect.database_url(settings)
    connect.check_reachable(url)
    base = Path(tempfile.mkdtemp(prefix="hive-bench-chat-"))
    server = Homeserver(base / "hs").start()
    try:
        with scratch.database(url) as db_url:
            db = pool.make_pool(db_url, max_size=4, name="bench-chat")
            try:
                with db.connection() as conn:
                    conn.execute("INSERT INTO hive.queen_issue (number, title) VALUES (1, 'one')")
                load_before = os.getloadavg()[0]
                latency = _latency(server, db, args.samples)
                bee = _bee(server, db, db_url, base, settings, args)
                flood = _flood(server, db, args.flood, Clocks(args.gap, args.per_minute))
                load_after = os.getloadavg()[0]
            finally:
                db.close()
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    load = {"load_average_start": load_before, "load_average_end": load_after}
    return latency | bee | flood | load


def _room(
    server: Homeserver, db: Any, clocks: Clocks, other: str = REVIEWER
) -> tuple[User, MatrixClient, Any, Room]:
    """A person in a new room, and the hive's Queen and the `other` bot in it, started."""
    stamp = time.monotonic_ns()
    person = server.register(f"person-{stamp}", "Person")
    queen = server.register(f"queen-{stamp}", "Queen")
    reviewer = server.register(f"{other}-{stamp}", other.capitalize())
    alias = f"bench-{stamp}"
    room_id = server.post(
        "/_matrix/client/v3/createRoom",
        {"preset": "public_chat", "room_alias_name": alias},
        person.access_token,
    )["room_id"]
    bots = (BotToken(QUEEN, queen.access_token), BotToken(other, reviewer.access_token))
    config = ChatConfig(server.url, f"#{alias}:{server.server_name}", bots, clocks)
    room = Room(db, config, HiveMetrics())
    actor = ChatActor.start(room, Registry())
    deadline = time.monotonic() + WAIT_SECONDS
    while store.cursor(db, config.room)[0] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    client = MatrixClient(server.url, person.access_token)
    client.join(room_id)
    return person, client, actor, room


def _latency(server: Homeserver, db: Any, samples: int) -> dict[str, Any]:
    person, client, actor, room = _room(server, db, Clocks(0.0, 600))
    since = client.sync(room.room_id, None, 0).next_batch
    took: dict[str, list[float]] = {QUEEN: [], REVIEWER: []}
    ids = {name: user for user, name in room.names.items()}
    try:
        for n in range(samples):
            name = QUEEN if n % 2 == 0 else REVIEWER
            started = time.monotonic()
            asked = client.send(
                room.room_id, f"ask-{n}", {"msgtype": "m.text", "body": f"{ids[name]} #1?"}
            )
            answered = False
            while not answered:
                page = client.sync(room.room_id, since, 5000)
                since = page.next_batch
                answered = any(m.sender == ids[name] and m.body for m in page.messages)
                if time.monotonic() - started > WAIT_SECONDS:
                    raise RuntimeError(f"no answer to {asked} in {WAIT_SECONDS:g}s")
            took[name].append(time.monotonic() - started)
    finally:
        actor.stop()
    del person
    return {
        "samples": samples,
        "queen_p50_ms": round(statistics.median(took[QUEEN]) * 1000, 1),
        "queen_max_ms": round(max(took[QUEEN]) * 1000, 1),
        "reviewer_p50_ms": round(statistics.median(took[REVIEWER] or [0.0]) * 1000, 1),
        "reviewer_max_ms": round(max(took[REVIEWER] or [0.0]) * 1000, 1),
    }


BEE = "bee"
BEE_AGENT = """#!/bin/sh
# the bench's bee: its turn takes $1 seconds, then answers
sleep "$1"
echo "because the issue asked for it"
"""


def _bee(
    server: Homeserver,
    db: Any,
    db_url: str,
    base: Path,
    settings: Settings,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """A bee's bot's answers by a turn: the total, the turn's own time, the overhead."""
    if not args.bee_samples:
        return {}
    repo = base / "repo"
    files = {"README.md": "# bench\n", "src/app.py": "print('hello')\n"}
    init_repository(repo, files, branch="main", message="bench\n", author=b"bench <b@hive>")
    checkout = open_checkout(str(repo), base / "work", "main")
    agent = base / "bee.sh"
    agent.write_text(BEE_AGENT)
    agent.chmod(0o755)
    sandbox = confine.chosen(settings)
    config = TurnsConfig(
        by="bench",
        agent=f"command:{agent} {args.bee_turn_seconds}",
        launch=Launch(sandbox=sandbox),
    )
    turns = ChatTurns(db, checkout, config)
    worker = ChatTurnsActor.start(turns, Registry(), db_url, 5.0)
    person, client, actor, room = _room(server, db, Clocks(0.0, 600), BEE)
    ids = {name: user for user, name in room.names.items()}
    since = client.sync(room.room_id, None, 0).next_batch
    total: list[float] = []
    own: list[float] = []
    try:
        for n in range(args.bee_samples):
            started = time.monotonic()
            body = {"msgtype": "m.text", "body": f"{ids[BEE]} #1 why {n}?"}
            client.send(room.room_id, f"bee-{n}", body)
            answered = False
            while not answered:
                page = client.sync(room.room_id, since, 5000)
                since = page.next_batch
                answered = any(m.sender == ids[BEE] and m.body for m in page.messages)
                if time.monotonic() - started > WAIT_SECONDS:
                    raise RuntimeError(f"no answer from the bee in {WAIT_SECONDS:g}s")
            total.append(time.monotonic() - started)
            own.append(turns.last_turn_seconds or 0.0)
    finally:
        actor.stop()
        worker.stop()
        checkout.repo.close()
    del person
    overhead = [t - o for t, o in zip(total, own, strict=True)]
    return {
        "bee_samples": args.bee_samples,
        "bee_sandbox": sandbox.kind.value,
        "bee_p50_ms": round(statistics.median(total) * 1000, 1),
        "bee_turn_p50_ms": round(statistics.median(own) * 1000, 1),
        "bee_overhead_p50_ms": round(statistics.median(overhead) * 1000, 1),
        "bee_overhead_max_ms": round(max(overhead) * 1000, 1),
    }


def _flood(server: Homeserver, db: Any, size: int, clocks: Clocks) -> dict[str, Any]:
    person, client, actor, room = _room(server, db, clocks)
    ids = {name: user for user, name in room.names.items()}
    since = client.sync(room.room_id, None, 0).next_batch
    started = time.monotonic()
    try:
        for n in range(size):
            name = QUEEN if n % 2 == 0 else REVIEWER
            body = {"msgtype": "m.text", "body": f"{ids[name]} flood {n} #1?"}
            client.send(room.room_id, f"flood-{n}", body)
        answers: list[tuple[str, int]] = []
        while len(answers) < size and time.monotonic() - started < WAIT_SECONDS:
            page = client.sync(room.room_id, since, 5000)
            since = page.next_batch
            answers += [(m.sender, m.ts_ms) for m in page.messages if m.sender in room.names]
        took = time.monotonic() - started
    finally:
        actor.stop()
    del person
    times = sorted(ts for _, ts in answers)
    busiest = max((sum(1 for u in times if t <= u < t + 60_000) for t in times), default=0)
    gaps = []
    for bot in room.names:
        mine = sorted(ts for sender, ts in answers if sender == bot)
        gaps += [(b - a) / 1000 for a, b in itertools.pairwise(mine)]
    dropped = sum(
        room.metrics.chat_dropped.labels(kind=k)._value.get() for k in ("answer", "chain")
    )
    return {
        "flood": size,
        "flood_answered": len(answers),
        "flood_dropped": int(dropped),
        "flood_gap_s": clocks.gap_seconds,
        "flood_cap_per_minute": clocks.per_minute,
        "flood_busiest_minute": busiest,
        "flood_shortest_gap_s": round(min(gaps, default=0.0), 3),
        "flood_last_answer_s": round(took, 1),
    }
