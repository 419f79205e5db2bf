"""config/hive.example.env and hive/settings.py can never drift apart."""

import re
from dataclasses import fields
from pathlib import Path

from hive.settings import PREFIX, Settings
from hive.settings.variables import SPECS

EXAMPLE = Path(__file__).resolve().parents[3] / "config" / "hive.example.env"
_LINE = re.compile(r"^(HIVE_[A-Z0-9_]+)=(.*)$")
# a variable with no default is listed commented out: set but empty is an error
_UNSET = re.compile(r"^# (HIVE_[A-Z0-9_]+)=(.*)$")
UNSET_BY_DEFAULT = {
    "HIVE_DATABASE_URL",
    "HIVE_LISTEN_URL",
    "HIVE_API_TOKEN",
    "HIVE_GITHUB_REPO",
    "HIVE_GITHUB_TOKEN",
    "HIVE_GITHUB_WEBHOOK_SECRET",
    "HIVE_MATRIX_TOKEN_QUEEN",
    "HIVE_MATRIX_TOKEN_REVIEWER",
}


def example_variables() -> dict[str, str]:
    found: dict[str, str] = {}
    for number, line in enumerate(EXAMPLE.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = _LINE.match(line)
        assert match, f"{EXAMPLE.name}:{number} is neither a comment nor NAME=value: {line!r}"
        assert match.group(1) not in found, f"{match.group(1)} is listed twice"
        found[match.group(1)] = match.group(2)
    return found


def unset_variables() -> set[str]:
    return {m.group(1) for m in map(_UNSET.match, EXAMPLE.read_text().splitlines()) if m}


def test_example_env_lists_exactly_the_variables_settings_knows():
    known = {PREFIX + suffix for suffix in SPECS} | {"HIVE_WORKER_KEY", "HIVE_WORKER_KEY_2"}
    assert set(example_variables()) | unset_variables() == known
    assert unset_variables() == UNSET_BY_DEFAULT


def test_the_commented_examples_are_accepted_when_set():
    lines = EXAMPLE.read_text().splitlines()
    examples = {m.group(1): m.group(2) for m in map(_UNSET.match, lines) if m}
    examples["HIVE_API_TOKEN"] = examples["HIVE_API_TOKEN"] or "a-token"
    Settings.from_env(examples)


def test_every_example_value_is_the_settings_default():
    listed = example_variables()
    keys = {name: listed.pop(name) for name in ("HIVE_WORKER_KEY", "HIVE_WORKER_KEY_2")}
    assert keys == {"HIVE_WORKER_KEY": "", "HIVE_WORKER_KEY_2": ""}, "the example holds no key"
    parsed = Settings.from_env(listed)
    for f in fields(Settings):
        if f.name in ("runner_name", "worker_keys"):
            continue  # runner_name defaults to hostname:pid; keys are checked above
        assert getattr(parsed, f.name) == getattr(Settings(), f.name), f.name


def test_every_example_variable_has_a_comment_saying_what_it_means():
    lines = EXAMPLE.read_text().splitlines()
    for number, line in enumerate(lines):
        if _LINE.match(line):
            above = lines[number - 1]
            assert above.startswith("#") or _LINE.match(above), f"{line} has no comment"
        if _UNSET.match(line):
            assert lines[number - 1].startswith("#"), f"{line} has no comment"
