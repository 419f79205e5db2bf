"""The modes' enums hold the words the settings allow, and the store's check results."""

from hive.metrics import CHECK_RESULTS
from hive.rules.modes import AgentKind, CheckResult, ForgeMode, PublishMode
from hive.settings import PUBLISH_MODES
from hive.settings.github import FORGES


def test_each_mode_s_enum_holds_the_words_its_setting_allows() -> None:
    assert tuple(PublishMode) == PUBLISH_MODES
    assert set(ForgeMode) == set(FORGES)
    assert {"demo", "claude", "codex", "off"} == {k.value for k in AgentKind}


def test_check_results_are_the_store_s_and_the_metric_s() -> None:
    assert tuple(r.value for r in CheckResult) == CHECK_RESULTS
