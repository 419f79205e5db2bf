"""The provider and model an agent reports are kept on the row: the Queen's guess from
her settings (HIVE_WORKER_PROVIDER, HIVE_WORKER_MODEL) gives way to what really ran."""

from __future__ import annotations

from hive.rules.keys import key_slots
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
