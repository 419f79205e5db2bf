"""The chat's config from the settings (hive.configs.chat): one bot per token."""

from hive import configs
from hive.rules.chat import Clocks
from hive.settings import Settings

MATRIX = {
    "HIVE_CHAT": "matrix",
    "HIVE_MATRIX_URL": "https://matrix.example.org",
    "HIVE_MATRIX_ROOM": "#hive:example.org",
    "HIVE_MATRIX_TOKEN_QUEEN": "syt_queen",
}


def test_the_chat_off_has_no_config():
    assert configs.chat(Settings.from_env({})) is None


def test_one_bot_per_token_the_queen_first_and_the_clocks_and_cap():
    config = configs.chat(
        Settings.from_env(
            MATRIX
            | {
                "HIVE_MATRIX_TOKEN_REVIEWER": "syt_reviewer",
                "HIVE_MATRIX_TOKEN_CLAUDE": "syt_claude",
                "HIVE_CHAT_GAP_SECONDS": "1.5",
                "HIVE_CHAT_ROOM_PER_MINUTE": "30",
                "HIVE_SPEND_CAP_USD": "25",
            }
        )
    )
    assert config is not None
    assert [(b.name, b.is_bee) for b in config.bots] == [
        ("queen", False),
        ("reviewer", False),
        ("claude", True),
    ]
    assert config.clocks == Clocks(1.5, 30) and config.spend_cap_usd == 25
    assert (config.url, config.room) == ("https://matrix.example.org", "#hive:example.org")
    assert "syt_" not in repr(config)


def test_without_the_reviewers_token_the_reviewer_is_silent():
    config = configs.chat(Settings.from_env(MATRIX))
    assert config is not None and [b.name for b in config.bots] == ["queen"]
    assert config.credits is None  # credits off: a bee's turn needs no credit


def test_with_credits_on_a_bees_turn_is_gated_by_the_terms():
    config = configs.chat(Settings.from_env(MATRIX | {"HIVE_CREDITS": "on"}))
    assert config is not None and config.credits is not None
    assert config.credits.default_account == "default"
