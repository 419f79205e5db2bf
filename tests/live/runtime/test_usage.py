"""The provider and model an agent reports are kept on the row: the Queen's guess from
her settings (HIVE_WORKER_PROVIDER, HIVE_WORKER_MODEL) gives way to what really ran."""

from __future__ import annotations

from hive import configs
from hive.rules.keys import key_slots
from hive.runtime import queen_ports
from hive.store import orders
from hive.store.orders import NewOrder
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import AGENT, add_issue
from tests.live.runtime.test_runner import claimer_of


def _queue(rt, issue: int) -> None:
    key = key_slots(rt.settings.worker_keys)[0]
    add_issue(rt.db, issue)
    new = NewOrder(
        issue,
        f"queen-{issue}",
        "main",
        owned_paths=("src/app.py",),
        key_index=key.index,
        key_fingerprint=key.fingerprint,
        brief=f"brief of #{issue}",
        provider="demo",
        model="the-queen-guess",
    )
    assert orders.insert(rt.db, new, queued=True) is orders.Insertion.WRITTEN


def test_the_reported_provider_and_model_replace_the_queens_settings_on_the_row(make_runtime):
    rt = make_runtime(AGENT=AGENT + "reports_usage")
    _queue(rt, 1)
    assert claimer_of(rt).run_once().started == (1,)
    order = wait_for_ending(rt.db, 1)
    assert order.outcome == "finished"
    assert (order.provider, order.model) == ("anthropic", "claude-reported")
    assert (order.input_tokens, order.output_tokens) == (5, 7)


def test_an_agent_that_reports_nothing_leaves_the_queens_provider_and_model(make_runtime):
    rt = make_runtime(AGENT=AGENT + "finish")
    _queue(rt, 2)
    assert claimer_of(rt).run_once().started == (2,)
    order = wait_for_ending(rt.db, 2)
    assert (order.provider, order.model) == ("demo", "the-queen-guess")


def test_a_queens_own_bee_keeps_the_reported_provider_and_model_too(make_runtime):
    from hive.actors.queen.queen import Queen

    rt = make_runtime(
        AGENT=AGENT + "reports_usage", WORKER_PROVIDER="demo", WORKER_MODEL="the-queen-guess"
    )
    add_issue(rt.db, 3)
    queen = Queen(queen_ports(rt), configs.queen_config(rt.settings), free_memory=lambda: None)
    assert queen.run_once().dispatched == (3,)  # local mode: her bee runs here
    order = wait_for_ending(rt.db, 3)
    assert order.outcome == "finished"
    assert (order.provider, order.model) == ("anthropic", "claude-reported")
    # the next round reads the row and writes nothing over what the agent reported
    queen.run_once()
    again = orders.get(rt.db, 3)
    assert again is not None and (again.provider, again.model) == ("anthropic", "claude-reported")


def test_a_usage_line_of_a_command_agent_reaches_the_row(make_runtime):
    line = "HIVE-USAGE: provider=openai model=gpt-5-mini input=2000000 output=0"
    rt = make_runtime(AGENT=f"command:echo '{line}'", WORKER_MODEL="the-queen-guess")
    _queue(rt, 4)
    assert claimer_of(rt).run_once().started == (4,)
    order = wait_for_ending(rt.db, 4)
    assert (order.provider, order.model, order.input_tokens) == ("openai", "gpt-5-mini", 2000000)
    assert (order.cost_usd, order.cost_source) == (0.5, "prices")  # $0.25 per million
