"""The modes' enums hold the words the settings allow, and the store's check results."""

import pytest

from hive.metrics.declared import CHECK_RESULTS
from hive.rules.modes import (
    AgentKind,
    ChatMode,
    CheckResult,
    ForgeMode,
    PublishMode,
    Role,
)
from hive.settings import Settings, SettingsError


@pytest.mark.parametrize(
    ("name", "field", "kind"),
    [
        ("PUBLISH", "publish", PublishMode),
        ("FORGE", "forge", ForgeMode),
        ("CHAT", "chat", ChatMode),
    ],
)
def test_each_mode_s_setting_is_a_member_of_its_enum(name: str, field: str, kind: type) -> None:
    defaults = Settings()
    assert isinstance(getattr(defaults, field), kind)
    for member in kind:
        env = {f"HIVE_{name}": member.value.upper()}
        try:
            parsed = Settings.from_env(env)
        except SettingsError as err:  # a mode that needs more variables says so, by name
            assert f"HIVE_{name}" in str(err)
            continue
        assert getattr(parsed, field) is member


@pytest.mark.parametrize(
    "name", ["PUBLISH", "FORGE", "CHAT", "AGENT_SANDBOX", "AGENT_NETWORK", "ROLE"]
)
def test_a_mode_outside_its_enum_is_refused_with_the_words_it_allows(name: str) -> None:
    with pytest.raises(SettingsError, match=f"HIVE_{name}"):
        Settings.from_env({f"HIVE_{name}": "sideways"})


def test_the_roles_are_members_and_say_what_the_process_does() -> None:
    both = Settings()
    assert both.roles == {Role.QUEEN, Role.RUNNER} and both.is_queen and both.is_runner
    runner = Settings.from_env({"HIVE_ROLE": " Runner "})
    assert runner.roles == {Role.RUNNER} and all(isinstance(r, Role) for r in runner.roles)
    assert runner.is_runner and not runner.is_queen


def test_the_agent_kinds_are_the_built_in_agents_and_off() -> None:
    assert {"demo", "claude", "codex", "off"} == {k.value for k in AgentKind}


def test_check_results_are_the_store_s_and_the_metric_s() -> None:
    assert tuple(r.value for r in CheckResult) == CHECK_RESULTS
