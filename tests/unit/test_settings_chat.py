"""The chat's variables (DESIGN 11): HIVE_CHAT=matrix and what it needs."""

import pytest

from hive.settings import Settings, SettingsError

MATRIX = {
    "HIVE_CHAT": "matrix",
    "HIVE_MATRIX_URL": "http://127.0.0.1:8008/",
    "HIVE_MATRIX_ROOM": "#hive:hive.test",
    "HIVE_MATRIX_TOKEN_QUEEN": "syt_queen_token_0123456789",
}


def problems(env: dict[str, str]) -> list[str]:
    with pytest.raises(SettingsError) as err:
        Settings.from_env(env)
    return err.value.problems


def test_the_chat_is_off_by_default():
    s = Settings.from_env({})
    assert s.chat == "off" and s.matrix_tokens == () and s.chat_room_per_minute == 20


def test_matrix_reads_its_url_room_tokens_and_clocks():
    s = Settings.from_env(
        MATRIX
        | {
            "HIVE_MATRIX_TOKEN_REVIEWER": "syt_reviewer",
            "HIVE_MATRIX_TOKEN_CLAUDE": "syt_claude",
            "HIVE_MATRIX_TOKEN_SHAPER": "syt_shaper",
            "HIVE_CHAT_GAP_SECONDS": "0.25",
            "HIVE_CHAT_ROOM_PER_MINUTE": "600",
        }
    )
    assert s.matrix_url == "http://127.0.0.1:8008"
    assert s.matrix_room == "#hive:hive.test"
    assert s.matrix_token_reviewer == "syt_reviewer"
    assert s.matrix_tokens == (("claude", "syt_claude"), ("shaper", "syt_shaper"))
    assert s.chat_gap_seconds == 0.25 and s.chat_room_per_minute == 600
    assert "syt_" not in repr(s)


def test_matrix_without_its_url_room_or_queen_token_names_each():
    got = problems({"HIVE_CHAT": "matrix"})
    assert got == [
        "HIVE_CHAT=matrix needs HIVE_MATRIX_URL (the homeserver's URL)",
        "HIVE_CHAT=matrix needs HIVE_MATRIX_ROOM (a room id or alias)",
        "HIVE_CHAT=matrix needs HIVE_MATRIX_TOKEN_QUEEN (the Queen bot's token)",
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HIVE_MATRIX_URL", "ftp://hs"),
        ("HIVE_MATRIX_URL", "http://user:pw@hs"),
        ("HIVE_MATRIX_URL", "https://hs/path"),
        ("HIVE_MATRIX_URL", "https://hs:99999"),
        ("HIVE_MATRIX_URL", "https://"),
        ("HIVE_MATRIX_ROOM", "hive"),
        ("HIVE_MATRIX_ROOM", "#hive"),
        ("HIVE_MATRIX_ROOM", "#hi ve:hs"),
        ("HIVE_CHAT", "irc"),
        ("HIVE_CHAT_GAP_SECONDS", "-1"),
        ("HIVE_CHAT_ROOM_PER_MINUTE", "0"),
        ("HIVE_CHAT_ROOM_PER_MINUTE", "601"),
    ],
)
def test_a_bad_value_is_one_clear_line(name, value):
    line = problems(MATRIX | {name: value})[0]  # then, for a URL or room, that it is needed
    assert line.startswith(f"{name}=") and "is not allowed" in line


@pytest.mark.parametrize(
    "name", ["HIVE_MATRIX_TOKEN_QUEEN", "HIVE_MATRIX_TOKEN_REVIEWER", "HIVE_MATRIX_TOKEN_CODEX"]
)
def test_a_bad_token_is_refused_and_never_shown(name):
    line = problems(MATRIX | {name: "secret with spaces"})[0]
    assert line.startswith(f"{name}=<hidden> is not allowed") and "secret" not in line


def test_a_room_id_is_taken_as_well_as_an_alias():
    assert Settings.from_env(MATRIX | {"HIVE_MATRIX_ROOM": "!abc:hs:8448"}).matrix_room


def test_a_misspelt_chat_variable_says_the_nearest_name():
    (line,) = problems({"HIVE_CHAT_GAP_SECOND": "1"})
    assert "did you mean HIVE_CHAT_GAP_SECONDS?" in line
