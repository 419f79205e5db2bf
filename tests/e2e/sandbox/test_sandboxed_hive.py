"""A real hive (`hive serve`: a Queen and a runner, HIVE_AGENT_SANDBOX=on) runs a hostile
`command:` agent and a hostile check: neither reaches the hive's secrets (its API token
in the processes' environment, the real embedded database's socket and files, the
workdirs), and the agent's legitimate work is reviewed, checked, merged and pushed."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from hive.agents.sandbox import Kind
from hive.agents.sandbox_choice import available
from hive.store import issues
from hive.store.issues import NewIssue
from hive.testing import git

from ..runtime.harness import World
from .test_hostile_turn import AGENT, ESCAPES

pytestmark = [pytest.mark.e2e, pytest.mark.live]

MERGED_SECONDS = 120.0
# what only a pid of the hive's own namespace names: a real hive's pids are not known to
# the agent before it runs, so these read every process's entry instead
PID_ESCAPES = ("signal_hive", "signal_warden", "ptrace_hive", "list_hive_processes")


def test_a_hostile_agent_and_check_in_a_real_hive_reach_nothing_and_the_work_merges(
    world: World,
) -> None:
    if available() is Kind.OFF:
        pytest.skip("no sandbox on this machine")
    secret = f"hive-secret-{uuid.uuid4().hex}"
    data_directory = world.db.execute("SHOW data_directory").fetchone()
    assert data_directory is not None
    where = conninfo_to_dict(world.db_url)
    socket_path = f"{where.get('host')}/.s.PGSQL.{where.get('port', 5432)}"
    planted = world.root / "planted"
    planted.mkdir()
    (planted / "secret.txt").write_text(secret)
    other_brief = Path(tempfile.mkdtemp(prefix="hive-brief-"))
    (other_brief / "brief.md").write_text(secret)
    env = {
        "HIVE_AGENT_SANDBOX": "on",
        "HIVE_API_TOKEN": secret,
        "HIVE_HTTP_ADDR": "127.0.0.1:0",
        "HIVE_AGENT": f"command:{AGENT} {planted / 'visible' / 'targets.json'}",
        "HIVE_AGENT_SANDBOX_PATHS": str(planted / "visible"),
        "HIVE_CHECK_HOSTILE": f"{AGENT} {planted / 'visible' / 'targets.json'} --short",
    }
    queen = world.queen(**env)
    runner = world.runner("runner-a", **env)
    targets = {
        "hive_pid": runner.pid,
        "warden_pid": queen.pid,
        "other_turn_pids": [queen.pid, runner.pid],
        "other_key": secret,
        "other_secret_file": str(planted / "secret.txt"),
        "other_brief": str(other_brief / "brief.md"),
        "record": str(world.root / "runner-a" / "turn-groups"),
        "db_socket": socket_path,
        "db_file": f"{data_directory[0]}/PG_VERSION",
        "home_secret": str(planted / "secret.txt"),
        "tmp_secret": str(other_brief / "brief.md"),
        "abstract_socket": "\0hive-none",
        "outside_file": str(world.root / "escaped.txt"),
        "home_file": str(planted / "escaped.txt"),
        "boundary_file": "files/f1.txt",
        "commit_symlink": False,
    }
    brief = json.dumps({"targets": targets, "secret": secret})
    (planted / "visible").mkdir()
    (planted / "visible" / "targets.json").write_text(brief)
    # the targets file is in HIVE_AGENT_SANDBOX_PATHS: the sandbox shows it read-only
    issues.upsert(
        world.db,
        1,
        NewIssue(
            title="Hostile",
            body="Change files/f1.txt.",
            boundary=("files/f1.txt",),
            criteria=("file `files/f1.txt` contains `work done inside the boundary`",),
        ),
    )
    world.wait(lambda: world.merged(1), MERGED_SECONDS, "#1 merged")
    text = git("show", "main:files/f1.txt", cwd=world.upstream)
    assert text == "work done inside the boundary"  # git() strips the last newline
    transcript = "\n".join(
        row[0]
        for row in world.db.execute(
            "SELECT text FROM hive.queen_transcript WHERE issue = 1 ORDER BY at, seq"
        ).fetchall()
    )
    assert secret not in transcript
    assert "ESCAPED" not in transcript, transcript
    for name in ESCAPES:
        assert f"ESCAPE {name}: refused" in transcript, f"{name}:\n{transcript}"
    tails = " ".join(
        row[0] for row in world.db.execute("SELECT output_tail FROM hive.queen_check").fetchall()
    )
    assert "ESCAPE read_hive_environ: refused" in tails and "ESCAPED" not in tails, tails
    assert secret not in tails
    assert not (world.root / "escaped.txt").exists()
    for serve in (queen, runner):
        assert f"sandbox: {available()} (every turn" in serve.tail(200)
