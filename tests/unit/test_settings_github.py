"""The GitHub forge's variables: typed, ranged, tied together, secrets never shown."""

from __future__ import annotations

import pytest

from hive.settings import Settings, SettingsError

TOKEN = "ghp_settingsTOKEN0123456789"
GITHUB = {
    "HIVE_FORGE": "github",
    "HIVE_GITHUB_REPO": "octo/hello",
    "HIVE_GITHUB_TOKEN": TOKEN,
}


def test_the_forge_is_local_by_default():
    s = Settings.from_env({})
    assert (s.forge, s.github_label, s.github_merge_method) == ("local", "hive", "merge")
    assert s.github_api_url == "https://api.github.com"


def test_the_github_forge_is_read():
    s = Settings.from_env(
        {
            **GITHUB,
            "HIVE_PUBLISH": "github",
            "HIVE_GITHUB_API_URL": "https://ghe.example.com/api/v3/",
            "HIVE_GITHUB_LABEL": " swarm ",
            "HIVE_GITHUB_WEBHOOK_SECRET": "s" * 20,
            "HIVE_GITHUB_MERGE_METHOD": "squash",
            "HIVE_GITHUB_POLL_SECONDS": "15",
        }
    )
    assert s.github_repo == "octo/hello" and s.github_token == TOKEN
    assert s.github_api_url == "https://ghe.example.com/api/v3"
    assert (s.github_label, s.github_merge_method, s.github_poll_seconds) == ("swarm", "squash", 15)
    assert TOKEN not in repr(s) and "s" * 20 not in repr(s)


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("HIVE_GITHUB_REPO", "octo", "owner/name"),
        ("HIVE_GITHUB_REPO", "octo/hello.git", "without .git"),
        ("HIVE_GITHUB_REPO", "oc to/hello", "owner/name"),
        ("HIVE_GITHUB_REPO", "octo/..", "without .git"),
        ("HIVE_GITHUB_API_URL", "http://api.github.com", "https://"),
        ("HIVE_GITHUB_API_URL", "https://user:pw@ghe.example.com/api/v3", "without a user"),
        ("HIVE_GITHUB_API_URL", "ftp://x", "https://"),
        ("HIVE_GITHUB_LABEL", "", "label name"),
        ("HIVE_GITHUB_LABEL", "a,b", "without a comma"),
        ("HIVE_GITHUB_LABEL", "x" * 51, "label name"),
        ("HIVE_GITHUB_MERGE_METHOD", "fast-forward", "merge"),
        ("HIVE_GITHUB_POLL_SECONDS", "0", "0.1"),
        ("HIVE_GITHUB_POLL_SECONDS", "86401", "86400"),
        ("HIVE_GITHUB_WEBHOOK_SECRET", "short", "16 to 4096"),
        ("HIVE_GITHUB_TOKEN", "has space", "printable ASCII"),
        ("HIVE_FORGE", "gitlab", "local"),
    ],
)
def test_a_bad_github_variable_is_one_line_naming_it(name, value, says):
    with pytest.raises(SettingsError) as bad:
        Settings.from_env({**GITHUB, name: value})
    line = next(p for p in bad.value.problems if p.startswith(name))
    assert says in line


def test_the_token_and_secret_are_never_echoed():
    with pytest.raises(SettingsError) as bad:
        Settings.from_env(
            {**GITHUB, "HIVE_GITHUB_TOKEN": "bad token", "HIVE_GITHUB_WEBHOOK_SECRET": "tiny"}
        )
    assert "bad token" not in str(bad.value) and "tiny" not in str(bad.value)
    assert "<hidden>" in str(bad.value)


def test_the_github_forge_needs_its_repository_and_token():
    with pytest.raises(SettingsError) as bad:
        Settings.from_env({"HIVE_FORGE": "github"})
    assert any("needs HIVE_GITHUB_REPO" in p for p in bad.value.problems)
    assert any("needs HIVE_GITHUB_TOKEN" in p for p in bad.value.problems)


def test_publishing_to_github_needs_the_github_forge():
    with pytest.raises(SettingsError, match="HIVE_PUBLISH=github needs HIVE_FORGE=github"):
        Settings.from_env({"HIVE_PUBLISH": "github"})


def test_a_loopback_http_api_is_allowed_for_a_test_server():
    s = Settings.from_env({**GITHUB, "HIVE_GITHUB_API_URL": "http://127.0.0.1:8123/api/v3"})
    assert s.github_api_url == "http://127.0.0.1:8123/api/v3"
