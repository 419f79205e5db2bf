"""The worker key stays secret through a real run: real `hive serve` processes at debug
level, a `command:` agent that prints `$HIVE_KEY` on both of its streams, one issue run
to its end. The key's value is in no log line of any process, in no transcript row (the
transcript holds `<key>` where the agent printed it) and in no row of any table.

(Metrics, the API, `hive status` and the tables after the commands are covered in
tests/live/surface/.)"""

from __future__ import annotations

import signal
import uuid

import pytest
from psycopg import sql

from hive.agents.transcript import REDACTED
from hive.rules.keys import key_fingerprint
from hive.store import transcript

from .runtime.harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

SECRET = uuid.uuid4().hex  # the part no other text in the run can contain by chance
KEY = f"sk-secrecy-{SECRET}"
AGENT = 'command:echo "my key is $HIVE_KEY"; echo "$HIVE_KEY" >&2'
END_SECONDS = 60.0
EXIT_SECONDS = 30.0


def every_row(world: World) -> list[str]:
    """Every row of every table of the `hive` schema, as text."""
    tables = world.db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'hive'"
    ).fetchall()
    rows: list[str] = []
    for (name,) in tables:
        query = sql.SQL("SELECT t::text FROM hive.{} AS t").format(sql.Identifier(name))
        rows += [row[0] for row in world.db.execute(query)]
    return rows


@pytest.mark.parametrize(
    ("roles", "log_format"),
    [("one process, queen and runner", "text"), ("a queen and a runner", "json")],
)
def test_worker_key_is_in_no_log_line_transcript_row_or_table(
    world: World, roles: str, log_format: str
) -> None:
    settings = {
        "HIVE_WORKER_KEY": KEY,
        "HIVE_AGENT": AGENT,
        "HIVE_LOG_LEVEL": "debug",
        "HIVE_LOG_FORMAT": log_format,
    }
    world.add_issue(1)
    if roles == "a queen and a runner":
        world.queen(**settings)
        world.runner("runner-1", **settings)
    else:
        world.start("hive", "queen,runner", **settings)

    order = world.wait(lambda: world.ended(1), END_SECONDS, "issue #1's order ends")
    assert order.outcome == "finished", world.report()
    for serve in world.serves:
        serve.send(signal.SIGTERM)
        assert world.exit_code(serve, EXIT_SECONDS) == 0, world.report()

    lines = transcript.read(world.db, order.conversation_id)
    said = [(line.kind, line.text) for line in lines if line.kind in ("stdout", "stderr")]
    # two streams, read by two threads: their lines interleave in either order
    assert sorted(said) == [("stderr", REDACTED), ("stdout", f"my key is {REDACTED}")]
    for serve in world.serves:
        log = serve.log()
        assert "debug" in log, f"{serve.name} did not log at debug level"
        assert SECRET not in log, f"{serve.name}'s log shows the key"
    rows = every_row(world)
    assert any(key_fingerprint(KEY) in row for row in rows), "the order names its key"
    assert [row for row in rows if SECRET in row] == []
