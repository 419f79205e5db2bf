"""A real Synapse for the chat's tests (one per test session and worker) and a person in
its room, driven through matrix-nio as a person's client would."""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nio
import pytest

from hive import orphans
from hive.bench.homeserver import Homeserver, User

WAIT_SECONDS = 30.0
_ROOMS = itertools.count(1)


@pytest.fixture(scope="session")
def homeserver() -> Iterator[Homeserver]:
    base = Path(tempfile.mkdtemp(prefix="hive-synapse-", dir="/tmp"))
    server = Homeserver(base / "hs").start()
    assert server.process is not None
    watcher = orphans.guard_group(server.process.pid, str(base))
    try:
        yield server
    finally:
        watcher.release()
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@dataclass(frozen=True)
class Seen:
    """A message the person saw: who, what, its id and its raw content."""

    event_id: str
    sender: str
    body: str
    content: dict[str, Any]


@dataclass
class Person:
    """A person in the room through matrix-nio: says things and waits for answers."""

    server: Homeserver
    user: User
    room_id: str = ""
    alias: str = ""
    seen: list[Seen] = field(default_factory=list)
    _since: str | None = None

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self.client = nio.AsyncClient(self.server.url, self.user.user_id)
        self.client.access_token = self.user.access_token
        self.client.user_id = self.user.user_id

    def _run(self, coro: Any) -> Any:
        return self._loop.run_until_complete(coro)

    def create_room(self, alias: str) -> str:
        got = self._run(self.client.room_create(alias=alias, preset=nio.RoomPreset.public_chat))
        assert isinstance(got, nio.RoomCreateResponse), got
        self.room_id = got.room_id
        self.alias = f"#{alias}:{self.server.server_name}"
        self._sync(0)  # from here on, what the person sees is new
        self.seen.clear()
        return self.room_id

    def say(self, body: str, **content: Any) -> str:
        message = {"msgtype": "m.text", "body": body, **content}
        got = self._run(self.client.room_send(self.room_id, "m.room.message", message))
        assert isinstance(got, nio.RoomSendResponse), got
        return str(got.event_id)

    def wait_for(
        self, check: Callable[[list[Seen]], bool], timeout: float = WAIT_SECONDS
    ) -> list[Seen]:
        """Sync until `check(everything seen)` holds; AssertionError at the deadline."""
        deadline = time.monotonic() + timeout
        while not check(self.seen):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"not seen in {timeout}s; seen: {self.seen}")
            self._sync(int(min(left, 2.0) * 1000))
        return self.seen

    def from_(self, sender: str) -> list[Seen]:
        return [s for s in self.seen if s.sender == sender]

    def _sync(self, timeout_ms: int) -> None:
        got = self._run(self.client.sync(timeout=timeout_ms, since=self._since))
        if not isinstance(got, nio.SyncResponse):
            time.sleep(0.2)  # the server is restarting: sync again
            return
        self._since = got.next_batch
        room = got.rooms.join.get(self.room_id)
        for event in room.timeline.events if room else []:
            source = event.source
            if source.get("type") == "m.room.message":
                content = source.get("content", {})
                self.seen.append(
                    Seen(event.event_id, event.sender, content.get("body", ""), content)
                )

    def close(self) -> None:
        self._run(self.client.close())
        self._loop.close()


@pytest.fixture
def person(homeserver: Homeserver) -> Iterator[Person]:
    """A person (a new user) in a new public room `#hive-N:hive.test` they created."""
    n = next(_ROOMS)
    who = Person(homeserver, homeserver.register(f"alice{n}-{time.monotonic_ns()}", "Alice"))
    who.create_room(f"hive-{n}-{time.monotonic_ns()}")
    yield who
    who.close()


@pytest.fixture
def bot(homeserver: Homeserver) -> Callable[[str, str], User]:
    """A new bot user: `bot("queen", "Queen")` (its Matrix name made unique)."""

    def make(name: str, displayname: str) -> User:
        return homeserver.register(f"{name}-{time.monotonic_ns()}", displayname)

    return make


@pytest.fixture
def db(hive_db_url: str) -> Iterator[Any]:
    from hive.store.pool import make_pool

    pool = make_pool(hive_db_url, max_size=4, name=f"chat-{time.monotonic_ns()}")
    yield pool
    pool.close()


@pytest.fixture
def chat(db: Any) -> Iterator[Callable[..., Any]]:
    """`chat(person, {"queen": user, ...}, gap_seconds=0, per_minute=600)`: the hive's
    chat loop (ChatActor over a Room on `db`) in the person's room, started once its bots
    joined; stopped when the test ends. Returns it Running."""
    from hive.actors.chat import ChatActor
    from hive.chat.config import BotToken, ChatConfig
    from hive.chat.room import Room
    from hive.metrics import HiveMetrics
    from hive.rules.chat import Clocks
    from supervisors import Registry

    started: list[Any] = []

    def start(
        person: Person,
        bots: dict[str, User],
        gap_seconds: float = 0.0,
        per_minute: int = 600,
        spend_cap_usd: float = 0.0,
        credits: Any = None,
        **room_args: Any,
    ) -> Any:
        config = ChatConfig(
            person.server.url,
            person.alias,
            tuple(BotToken(name, user.access_token) for name, user in bots.items()),
            Clocks(gap_seconds, per_minute),
            sync_wait_seconds=0.5,
            spend_cap_usd=spend_cap_usd,
            credits=credits,
        )
        room = Room(db, config, HiveMetrics(), **room_args)
        actor = ChatActor.start(room, Registry())
        started.append(actor)
        wait_until(lambda: room.outbox is not None, "the bots joined")
        return Running(room, actor)

    yield start
    for actor in started:
        if actor.is_alive():
            actor.stop()


@dataclass
class Running:
    """A started chat loop: its Room, and `stop()` (a drain: the pass in hand ends)."""

    room: Any
    actor: Any

    def stop(self) -> None:
        self.actor.stop()


def wait_until(check: Callable[[], Any], what: str, timeout: float = WAIT_SECONDS) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not in {timeout}s")
        time.sleep(0.05)
    return got


def add_issue(db: Any, number: int, title: str = "sample") -> None:
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO hive.queen_issue (number, title) VALUES (%s, %s)", (number, title)
        )


def judged(db: Any, number: int, verdict: str, note: str) -> None:
    """Issue `number` with an attempt that finished and the reviewer's `verdict`."""
    import uuid

    add_issue(db, number)
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
            " dispatched_at, finished_at, outcome, outcome_code, review_state, review_note,"
            " reviewed_at) VALUES (%s, %s, 'main', true, %s, now(), now(), 'finished',"
            " 'finished', %s, %s, now())",
            (number, f"queen-{number}", uuid.uuid4(), verdict, note),
        )
