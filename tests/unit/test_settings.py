from pathlib import Path

import pytest

from hive import configs
from hive.http.server import HttpConfig
from hive.rules.reviewer import REVIEW_ROW_SECONDS
from hive.settings import Settings, SettingsError


def test_defaults_match_the_design():
    s = Settings.from_env({})
    assert s.roles == {"queen", "runner"}
    assert s.pgdata == Path(".hive/pg")
    assert s.queen_tick_seconds == 30
    assert s.queen_bees_run_elsewhere is False
    assert (s.max_workers, s.runner_seconds, s.runner_slots) == (4, 15, 1)
    assert (s.runner_drain_seconds, s.platform_drain_seconds) == (1800, 0)
    assert (s.runner_silent_minutes, s.stall_minutes, s.turn_max_seconds) == (10, 120, 3600)
    assert s.bee_memory_mb == 1024
    assert s.http_addr == "127.0.0.1:8080"
    assert s.key_env == "HIVE_KEY"
    assert s.bundle_max_bytes == 100 * 1024 * 1024
    assert s.runner_name  # hostname:pid


def test_values_are_parsed():
    s = Settings.from_env(
        {
            "HIVE_ROLE": "runner",
            "HIVE_QUEEN_BEES_RUN_ELSEWHERE": "on",
            "HIVE_RUNNER_SLOTS": "64",
            "HIVE_RUNNER_SILENT_MINUTES": "0.05",
            "HIVE_AGENT": "python:tests.agents:finish",
            "HIVE_WORKER_KEY": "k1",
            "HIVE_WORKER_KEY_2": "k2",
            "HIVE_HTTP_ADDR": "0.0.0.0:0",
            "HIVE_RUNNER_NAME": "r1",
        }
    )
    assert s.roles == {"runner"} and s.is_runner and not s.is_queen
    assert s.queen_bees_run_elsewhere is True
    assert s.runner_slots == 64
    assert s.runner_silent_minutes == 0.05
    assert s.worker_keys == {"HIVE_WORKER_KEY": "k1", "HIVE_WORKER_KEY_2": "k2"}
    assert (s.http_host, s.http_port) == ("0.0.0.0", 0)
    assert s.runner_name == "r1"


def test_every_bad_variable_is_reported_at_once():
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(
            {
                "HIVE_RUNNER_SLOTS": "65",
                "HIVE_ROLE": "king",
                "HIVE_QUEEN_BEES_RUN_ELSEWHERE": "maybe",
                "HIVE_AGENT": "python:nomodule",
                "HIVE_LOG_FORMAT": "xml",
                "HIVE_RUNNER_SECONDS": "-1",
                "HIVE_WORKER_LANES_PER_KEY": "5",
            }
        )
    text = str(caught.value)
    assert len(caught.value.problems) == 7
    assert "HIVE_RUNNER_SLOTS='65'" in text and "from 1 to 64" in text
    assert "HIVE_ROLE='king'" in text and "queen, runner" in text
    assert "HIVE_QUEEN_BEES_RUN_ELSEWHERE='maybe'" in text and "on or off" in text
    assert "HIVE_AGENT='python:nomodule'" in text
    assert "HIVE_LOG_FORMAT='xml'" in text and "text or json" in text
    assert "HIVE_RUNNER_SECONDS='-1'" in text
    assert "HIVE_WORKER_LANES_PER_KEY='5'" in text and "from 1 to 4" in text


def test_a_misspelt_variable_names_the_nearest_valid_one():
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"HIVE_RUNER_SLOTS": "2"})
    assert caught.value.problems == [
        "HIVE_RUNER_SLOTS is not a hive variable (did you mean HIVE_RUNNER_SLOTS?)"
    ]


def test_a_key_suffix_with_a_leading_zero_or_one_is_refused():
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"HIVE_WORKER_KEY_02": "a", "HIVE_WORKER_KEY_1": "b"})
    text = str(caught.value)
    assert "HIVE_WORKER_KEY_02" in text and "HIVE_WORKER_KEY_1 " in text


def test_a_secret_value_is_never_echoed():
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"HIVE_DATABASE_URL": "", "HIVE_HTTP_ADDR": "nohost"})
    assert "nohost" in str(caught.value)
    s = Settings.from_env({"HIVE_DATABASE_URL": "postgresql://u:secret@h/db"})
    assert s.database_url == "postgresql://u:secret@h/db"


def test_agent_side_variables_are_ignored():
    s = Settings.from_env({"HIVE_ISSUE": "3", "HIVE_BRIEF_FILE": "/tmp/b", "HIVE_KEY": "x"})
    assert s.agent == "demo"


def test_a_repr_of_the_settings_shows_no_key_or_token():
    s = Settings.from_env(
        {
            "HIVE_WORKER_KEY": "sk-first-0123456789",
            "HIVE_WORKER_KEY_2": "sk-second-0123456789",
            "HIVE_API_TOKEN": "token-0123456789",
        }
    )
    assert s.worker_keys["HIVE_WORKER_KEY_2"] == "sk-second-0123456789"
    shown = repr(s) + repr(HttpConfig.from_settings(s))
    assert "0123456789" not in shown
    assert "runner_slots=1" in shown


def test_checks_are_read_by_name_and_an_empty_check_is_refused() -> None:
    got = Settings.from_env({"HIVE_CHECK_UNIT": "pytest -q", "HIVE_CHECK_LINT_2": "ruff ."})
    assert got.checks == (("lint_2", "ruff ."), ("unit", "pytest -q"))
    with pytest.raises(SettingsError, match="HIVE_CHECK_UNIT='' is not allowed"):
        Settings.from_env({"HIVE_CHECK_UNIT": " "})


def test_a_misspelt_check_prefix_is_not_taken_for_a_check() -> None:
    with pytest.raises(SettingsError, match="HIVE_CHECKS_UNIT is not a hive variable"):
        Settings.from_env({"HIVE_CHECKS_UNIT": "pytest"})


def test_publish_and_reviewer_agent_are_checked() -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"HIVE_PUBLISH": "merge", "HIVE_REVIEWER_AGENT": "gpt"})
    assert "HIVE_PUBLISH='merge'" in str(err.value)
    assert "HIVE_REVIEWER_AGENT='gpt'" in str(err.value)


def test_listen_url_defaults_to_the_database_url_and_another_one_means_a_pooler():
    from hive.store.connect import listen_url, pooled

    pooler = "postgresql://u:secret@bouncer:6432/db"
    direct = "postgresql://u:secret@primary:5432/db"
    same = Settings.from_env({"HIVE_DATABASE_URL": direct})
    assert same.listen_url is None
    assert listen_url(same, direct) == direct and not pooled(same, direct)
    split = Settings.from_env({"HIVE_DATABASE_URL": pooler, "HIVE_LISTEN_URL": direct})
    assert listen_url(split, pooler) == direct and pooled(split, pooler)
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"HIVE_LISTEN_URL": "mysql://u:secret@h/db"})
    assert "HIVE_LISTEN_URL" in str(caught.value) and "secret" not in str(caught.value)


def test_a_review_is_bounded_at_its_setting_and_300_s_by_default() -> None:
    assert configs.reviewer_config(Settings.from_env({})).bound_seconds == REVIEW_ROW_SECONDS
    short = Settings.from_env({"HIVE_REVIEW_MAX_SECONDS": "7"})
    assert configs.reviewer_config(short).bound_seconds == 7.0
    with pytest.raises(SettingsError, match="HIVE_REVIEW_MAX_SECONDS"):
        Settings.from_env({"HIVE_REVIEW_MAX_SECONDS": "0"})
