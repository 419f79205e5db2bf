"""Hostile settings: every bad value is one line naming the variable and what is allowed,
never a traceback, never a password (issue 14)."""

import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive import cli
from hive.configs import jobs_config
from hive.settings import KNOWN, PREFIX, Settings, SettingsError
from hive.settings.variables import SPECS

PASSWORD = "pw-Zq81x"


def problems(env: dict[str, str]) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env)
    return caught.value.problems


def one_problem(name: str, value: str) -> str:
    found = problems({name: value})
    assert len(found) == 1, found
    assert found[0].startswith(f"{name}="), found
    return found[0]


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "notaurl",
        f"postgresql://u:{PASSWORD}@[bad/db",
        f"postgresql://u:{PASSWORD}@h:99999/db",
        f"postgresql://u:{PASSWORD}@h:0/db",
        f"postgresql://u:{PASSWORD}@h:5x/db",
        f"postgresql://u:{PASSWORD}@h:٥٤٣٢/db",
        f"host=h password={PASSWORD} port=abc",
        f"host=h password='{PASSWORD}",
        f"nosuchoption=1 password={PASSWORD}",
        f"mysql://u:{PASSWORD}@h/db",
        f"{PASSWORD}://h/db",
        f"postgresql://u:{PASSWORD}@h/db\x1b[2J",
    ],
)
def test_a_bad_database_url_is_one_line_without_its_password(url: str) -> None:
    line = one_problem("HIVE_DATABASE_URL", url)
    assert line.startswith("HIVE_DATABASE_URL=<hidden> is not allowed: expected ")
    assert PASSWORD not in line and "\n" not in line


def test_an_empty_database_url_does_not_start_the_embedded_server() -> None:
    line = one_problem("HIVE_DATABASE_URL", "")
    assert "unset it (not empty) to use the embedded server" in line


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:p@db:5432/hive",
        "postgres://db/hive",
        "postgresql:///hive?host=/var/run/postgresql",
        "postgresql://u@h1:5432,h2:5433/hive?target_session_attrs=read-write",
        "host=db port=5432 dbname=hive user=u password='a b'",
    ],
)
def test_a_database_url_in_either_form_is_kept_as_given(url: str) -> None:
    assert Settings.from_env({"HIVE_DATABASE_URL": url}).database_url == url


def test_a_workdir_that_is_a_file_or_under_a_file_or_in_proc_is_refused(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert "it is a file" in one_problem("HIVE_WORKDIR", str(afile))
    assert f"{afile} is a file" in one_problem("HIVE_WORKDIR", str(afile / "work"))
    for virtual in ("/proc/self/cwd", "/sys/hive", "/dev/shm/hive", "/proc"):
        assert "outside /proc, /sys and /dev" in one_problem("HIVE_WORKDIR", virtual)
    assert "directory path" in one_problem("HIVE_PGDATA", "")
    assert "at most 4095 bytes" in one_problem("HIVE_WORKDIR", "/tmp/" + "a" * 300)
    assert "control characters" in one_problem("HIVE_WORKDIR", "/tmp/a\nb")


def test_a_symlink_into_proc_is_refused_as_proc(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/proc/self")
    assert "outside /proc" in one_problem("HIVE_WORKDIR", str(tmp_path / "link" / "w"))


def test_a_read_only_workdir_is_left_to_the_process_that_writes_it(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)  # `hive migrate` on a read-only root file system must start
    assert Settings.from_env({"HIVE_WORKDIR": str(locked / "work")}).workdir == locked / "work"


def test_a_workdir_that_does_not_exist_yet_is_accepted(tmp_path: Path) -> None:
    wanted = tmp_path / "a" / "b"
    assert Settings.from_env({"HIVE_WORKDIR": str(wanted)}).workdir == wanted


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HIVE_RUNNER_SILENT_MINUTES", "1e26"),
        ("HIVE_RUNNER_SILENT_MINUTES", "0"),
        ("HIVE_QUEEN_TICK_SECONDS", "1e-300"),
        ("HIVE_QUEEN_TICK_SECONDS", "0.01"),
        ("HIVE_QUEEN_TICK_SECONDS", "nan"),
        ("HIVE_RUNNER_SECONDS", "inf"),
        ("HIVE_RUNNER_SECONDS", "3601"),
        ("HIVE_STALL_MINUTES", "0.5"),
        ("HIVE_STALL_MINUTES", "10081"),
        ("HIVE_TURN_MAX_SECONDS", "86401"),
        ("HIVE_RUNNER_DRAIN_SECONDS", "-1"),
        ("HIVE_PLATFORM_DRAIN_SECONDS", "99999999999999999999999"),
        ("HIVE_BUNDLE_MAX_BYTES", "2000000000"),
        ("HIVE_BEE_MEMORY_MB", "1e3"),
        ("HIVE_CHECKS_TIMEOUT_SECONDS", "0"),
        # digits that int() and float() take, and no person means
        ("HIVE_RUNNER_SLOTS", "٣"),
        ("HIVE_MAX_WORKERS", "１２"),
        ("HIVE_TURN_MAX_SECONDS", "1_000"),
        ("HIVE_QUEEN_TICK_SECONDS", "3_0"),
        ("HIVE_RUNNER_SECONDS", "１.５"),
        ("HIVE_HTTP_ADDR", "127.0.0.1:٨٠٨٠"),
        ("HIVE_HTTP_ADDR", "127.0.0.1:８０８０"),
        ("HIVE_HTTP_ADDR", "127.0.0.1:65536"),
        ("HIVE_HTTP_ADDR", "::1:8080"),
        ("HIVE_HTTP_ADDR", "bad host:8080"),
    ],
)
def test_every_number_has_a_range_and_ascii_digits(name: str, value: str) -> None:
    line = one_problem(name, value)
    assert "expected " in line and "\n" not in line


def test_a_fractional_stall_window_is_refused_so_every_outcome_is_in_the_closed_set() -> None:
    assert "a whole number from 1 to 10080" in one_problem("HIVE_STALL_MINUTES", "0.5")
    assert Settings.from_env({"HIVE_STALL_MINUTES": "2"}).stall_minutes == 2


@pytest.mark.parametrize("token", ["", " ", "\t", "tökén", "two words", "a\x00b", "x" * 4097])
def test_a_token_no_client_can_send_is_refused_and_not_echoed(token: str) -> None:
    line = one_problem("HIVE_API_TOKEN", token)
    assert line.startswith("HIVE_API_TOKEN=<hidden> is not allowed")


@pytest.mark.parametrize("key", ["ключ-1234567", "sk live", "sk\x1b[0m"])
def test_a_worker_key_no_provider_can_take_is_refused_and_not_echoed(key: str) -> None:
    line = one_problem("HIVE_WORKER_KEY_2", key)
    assert line == (
        "HIVE_WORKER_KEY_2=<hidden> is not allowed: expected printable ASCII without spaces"
    )


def test_an_empty_worker_key_is_still_skipped() -> None:
    keys = Settings.from_env({"HIVE_WORKER_KEY": "", "HIVE_WORKER_KEY_2": " k2 "}).worker_keys
    assert keys == {"HIVE_WORKER_KEY": "", "HIVE_WORKER_KEY_2": " k2 "}


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "HOME",
        "BASH_ENV",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS_TOKEN",
        "HIVE_ISSUE",
        "HIVE_WORKER_KEY",
        "anthropic_api_key",
        "1KEY",
        "A-B_KEY",
    ],
)
def test_key_env_refuses_a_variable_a_program_reads(name: str) -> None:
    assert "ending in KEY, TOKEN, SECRET or PASSWORD" in one_problem("HIVE_KEY_ENV", name)


@pytest.mark.parametrize(
    "name", ["HIVE_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"]
)
def test_key_env_takes_a_provider_s_variable(name: str) -> None:
    assert Settings.from_env({"HIVE_KEY_ENV": name}).key_env == name


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HIVE_BASE_REF", "main..x"),
        ("HIVE_BASE_REF", "-main"),
        ("HIVE_BASE_REF", "ma in"),
        ("HIVE_BASE_REF", "main\n"),
        ("HIVE_RUNNER_NAME", "r1\x1b[31m"),
        ("HIVE_RUNNER_NAME", "r\u202e1"),
        ("HIVE_RUNNER_NAME", "r" * 129),
        ("HIVE_WORKER_MODEL", "m\r"),
        ("HIVE_WORKER_PROVIDER", "open ai"),
        ("HIVE_REPO_URL", "/srv/repo\n"),
        ("HIVE_AGENT", "python:a b:c"),
        ("HIVE_CHECK_UNIT", "pytest\x00"),
        ("HIVE_ROLE", "queen\x00"),
        ("HIVE_LOG_LEVEL", "\udcff"),
    ],
)
def test_text_that_a_terminal_log_or_git_would_misread_is_refused(name: str, value: str) -> None:
    line = one_problem(name, value)
    assert "\x1b" not in line and "\u202e" not in line and "\x00" not in line


def test_an_unknown_name_with_control_characters_is_shown_escaped() -> None:
    (line,) = problems({"HIVE_X\x1b[2J": "1"})
    assert line == "'HIVE_X\\x1b[2J' is not a hive variable (letters, digits, _)"


def test_a_long_value_is_cut_in_its_message() -> None:
    line = one_problem("HIVE_ROLE", "q" * 10_000)
    assert len(line) < 300 and line.startswith("HIVE_ROLE='qqqq")


def test_the_command_line_reports_a_bad_url_in_one_line_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [n for n in os.environ if n.startswith(PREFIX)]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HIVE_DATABASE_URL", f"postgresql://u:{PASSWORD}@[bad/db")
    assert cli.main(["status"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hive: HIVE_DATABASE_URL=<hidden>")
    assert PASSWORD not in err


# ---- for any input: Settings or SettingsError, one line per problem, no secret --------

_NAMES = sorted(KNOWN | {"HIVE_WORKER_KEY_2", "HIVE_WORKER_KEY_1", "HIVE_CHECK_UNIT"})
_NUMBERISH = st.text(alphabet=string.digits + ".-+_e ١٢３" + "\u0660", max_size=12)
_VALUES = st.one_of(st.text(max_size=40), _NUMBERISH, st.sampled_from(["", " ", "on", "0"]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    env=st.dictionaries(
        st.one_of(st.sampled_from(_NAMES), st.text(max_size=12).map(lambda t: PREFIX + t)),
        _VALUES,
        max_size=8,
    )
)
def test_any_environment_gives_settings_or_one_line_per_problem(env: dict[str, str]) -> None:
    secrets = {v for n, v in env.items() if n in ("HIVE_API_TOKEN", "HIVE_DATABASE_URL")}
    # the keys are secrets; HIVE_WORKER_KEY_OWNERS (their lenders' names) is not
    secrets |= {
        v.strip()
        for n, v in env.items()
        if n.startswith("HIVE_WORKER_KEY") and n != "HIVE_WORKER_KEY_OWNERS"
    }
    secrets = {s for s in secrets if len(s) >= 6}  # a short one may be any word
    try:
        got = Settings.from_env(env)
    except SettingsError as err:
        assert err.problems
        for line in err.problems:
            assert "\n" not in line and "\r" not in line and "\x1b" not in line
            assert not any(s in line for s in secrets), line
        return
    assert 0 <= got.http_port <= 65535
    assert isinstance(got.stall_minutes, int) and 1 <= got.stall_minutes <= 10080
    assert 0.1 <= got.queen_tick_seconds <= 86400 and 0.1 <= got.runner_seconds <= 3600


@given(
    name=st.sampled_from(sorted(n for n, (_, parse) in SPECS.items())),
    value=st.text(max_size=30),
)
def test_no_parser_raises_anything_but_a_settings_error(name: str, value: str) -> None:
    try:
        got = Settings.from_env({PREFIX + name: value})
    except SettingsError as err:
        assert len(err.problems) == 1 and err.problems[0].startswith(PREFIX + name)
    else:
        assert got == Settings.from_env({PREFIX + name: value})


def test_publish_jobs_takes_1_to_32_and_says_so_for_anything_else() -> None:
    assert Settings.from_env({}).publish_jobs == 4
    assert Settings.from_env({"HIVE_PUBLISH_JOBS": "1"}).publish_jobs == 1
    assert Settings.from_env({"HIVE_PUBLISH_JOBS": "32"}).publish_jobs == 32
    for bad in ("0", "33", "-1", "two", "2.5"):
        line = one_problem("HIVE_PUBLISH_JOBS", bad)
        assert f"HIVE_PUBLISH_JOBS={bad!r}" in line or f"HIVE_PUBLISH_JOBS={bad}" in line
        assert "a whole number from 1 to 32" in line, line


def test_publish_lane_seconds_takes_0_to_3600_and_the_lane_is_only_for_a_push() -> None:
    assert Settings.from_env({}).publish_lane_seconds == 60
    assert Settings.from_env({"HIVE_PUBLISH_LANE_SECONDS": "0"}).publish_lane_seconds == 0
    for bad in ("-1", "3601", "1.5", "soon"):
        line = one_problem("HIVE_PUBLISH_LANE_SECONDS", bad)
        assert "a whole number from 0 to 3600" in line, line
    push = Settings.from_env({"HIVE_PUBLISH_LANE_SECONDS": "30"})
    assert jobs_config(push).lane_seconds == 30.0
    off = Settings.from_env({"HIVE_PUBLISH_LANE_SECONDS": "30", "HIVE_PUBLISH": "off"})
    assert jobs_config(off).lane_seconds == 0.0  # no push into one base
