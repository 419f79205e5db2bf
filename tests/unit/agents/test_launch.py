"""What reaches a turn (HIVE_AGENT_PASS_ENV) and who it runs as (HIVE_AGENT_USER)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from hive.agents import Turn, TurnStartError
from hive.agents.launch import Launch, RunAs, passed_variables
from hive.settings import Settings, SettingsError

from .conftest import Recorder

Start = Callable[..., Turn]
BEE_USER = "hivebee"


def test_only_the_named_variables_pass_and_never_a_hive_one() -> None:
    environ = {"ANTHROPIC_BASE_URL": "http://gw", "HTTPS_PROXY": "p", "HIVE_API_TOKEN": "t"}
    names = ("ANTHROPIC_BASE_URL", "HIVE_API_TOKEN", "hive_api_token", "SSL_CERT_FILE")
    assert passed_variables(names, environ) == {"ANTHROPIC_BASE_URL": "http://gw"}


def test_a_turn_gets_the_named_variables_beside_path_home_and_lang(
    start: Start, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/gateway")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("HIVE_DATABASE_URL", "postgresql://hive:secret@db/hive")
    launch = Launch(pass_env=("ANTHROPIC_BASE_URL", "HIVE_DATABASE_URL", "ABSENT"))
    turn = start("command:env | sort", launch=launch)
    assert turn.wait(10)
    lines = set(recorder.texts("stdout"))
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:9/gateway" in lines
    assert not any(line.startswith(("HTTPS_PROXY=", "HIVE_DATABASE_URL=")) for line in lines)
    assert not any(line.startswith("ABSENT=") for line in lines)


def test_settings_refuse_a_hive_variable_or_a_secret_under_another_name() -> None:
    url = "postgresql://hive:secret@db/hive"
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"HIVE_AGENT_PASS_ENV": "HTTPS_PROXY,HIVE_DATABASE_URL"})
    assert "HIVE_AGENT_PASS_ENV" in str(err.value)
    with pytest.raises(SettingsError) as err:
        Settings.from_env(
            {
                "HIVE_DATABASE_URL": url,
                "HIVE_API_TOKEN": "tok-123456",
                "HIVE_AGENT_PASS_ENV": "DB, TOKEN, HTTPS_PROXY",
                "DB": url,
                "TOKEN": "tok-123456",
                "HTTPS_PROXY": "http://proxy:3128",
            }
        )
    problems = err.value.problems
    assert problems == [
        "HIVE_AGENT_PASS_ENV names DB, which holds the database URL: it never reaches a turn",
        "HIVE_AGENT_PASS_ENV names TOKEN, which holds the API token: it never reaches a turn",
    ]
    assert url not in str(err.value) and "tok-123456" not in str(err.value)
    ok = Settings.from_env({"HIVE_AGENT_PASS_ENV": " ANTHROPIC_BASE_URL , SSL_CERT_FILE"})
    assert ok.agent_pass_env == ("ANTHROPIC_BASE_URL", "SSL_CERT_FILE")


def test_settings_take_claude_codex_and_an_unprivileged_agent_user() -> None:
    assert Settings.from_env({"HIVE_AGENT": "claude"}).agent == "claude"
    assert Settings.from_env({"HIVE_AGENT": "codex"}).agent == "codex"
    with pytest.raises(SettingsError, match="codex"):
        Settings.from_env({"HIVE_AGENT": "codex2"})
    nobody = pwd.getpwnam("nobody")
    assert Settings.from_env({"HIVE_AGENT_USER": "nobody"}).agent_user == "nobody"
    assert Settings.from_env({"HIVE_AGENT_USER": str(nobody.pw_uid)}).agent_user
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"HIVE_AGENT_USER": "root"})
    assert "unprivileged" in str(err.value)
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"HIVE_AGENT_USER": "no-such-user-here"})
    assert "a user of this machine" in str(err.value)


def test_an_unknown_agent_user_stops_the_start_with_one_line(start: Start) -> None:
    with pytest.raises(TurnStartError, match="HIVE_AGENT_USER='no-such-user-here'"):
        start("command:true", launch=Launch(user="no-such-user-here"))


@pytest.fixture
def bee_user() -> str:
    """An unprivileged user for the turns (created when absent: the tests run as root)."""
    if os.geteuid() != 0:
        pytest.skip("running a turn as another user needs root (CAP_SETUID, CAP_SETGID)")
    try:
        pwd.getpwnam(BEE_USER)
    except KeyError:
        useradd = shutil.which("useradd")
        if useradd is None:
            pytest.skip("no useradd on this machine to create the turn's user")
        subprocess.run([useradd, "--system", "--create-home", BEE_USER], check=True)
    return BEE_USER


def test_a_turn_runs_as_the_agent_user_owns_its_worktree_and_cannot_read_the_hive_environ(
    start: Start, recorder: Recorder, worktree: Path, bee_user: str, tmp_path: Path
) -> None:
    tmp_path.chmod(0o755)  # the worktree's parents must be passable, as HIVE_WORKDIR's are
    (worktree / "file.txt").write_text("x\n")
    entry = pwd.getpwnam(bee_user)
    script = (
        'id -u; echo "HOME=$HOME"; stat -c %u file.txt; cat "$HIVE_BRIEF_FILE" >/dev/null '
        f"&& echo brief-read; cat /proc/{os.getpid()}/environ >/dev/null 2>&1 "
        "&& echo environ-read || echo environ-refused; touch new.txt && echo wrote"
    )
    turn = start(f"command:{script}", launch=Launch(user=bee_user))
    assert turn.wait(10)
    assert turn.outcome == "finished", recorder.lines
    assert recorder.texts("stdout") == [
        str(entry.pw_uid),
        f"HOME={entry.pw_dir}",
        str(entry.pw_uid),
        "brief-read",
        "environ-refused",
        "wrote",
    ]
    assert RunAs.of(bee_user).uid == entry.pw_uid
