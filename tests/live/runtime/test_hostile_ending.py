"""An agent's output never fails an ending (issue 25, item 4): an absurd figure is
ignored where it is read, and an ending the store still refuses is written plainer, so
no order stays running with its turn over and its key lane held."""

from __future__ import annotations

from pathlib import Path

from hive import configs
from hive.actors.bee.ending import Leftover, close_order
from hive.git.repo import resolve
from hive.git.worktrees import cut_worktree
from hive.rules.states import Outcome
from hive.runtime import queen_ports, reaper_ports
from hive.store import bundles, orders
from hive.store.endings import OrderEnding
from hive.store.orders import Fence, NewOrder
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import AGENT, add_issue
from tests.live.runtime.test_runner import claimer_of
from tests.live.runtime.test_usage import _queue


def _close(rt, issue: int, ending_of) -> object:
    """A local order of `issue` with one uncommitted boundary file, closed as
    `ending_of(fence)` says."""
    add_issue(rt.db, issue)
    new = NewOrder(issue, f"queen-{issue}", "main", owned_paths=("src/app.py",))
    assert orders.insert(rt.db, new, queued=False) is orders.Insertion.WRITTEN
    cut = cut_worktree(rt.checkout.repo, issue, "main", rt.checkout.workdir)
    (cut.path / "src/app.py").write_text("print('changed')\n")
    left = Leftover(Path(cut.path), ("src/app.py",), "main", resolve(rt.checkout.repo, "main"))
    ending = ending_of(Fence(issue, new.conversation_id, None))
    return close_order(rt.db, rt.checkout, rt.metrics, ending, left, 100 * 1024 * 1024)


def test_an_ending_no_bigint_holds_is_written_without_the_agents_figures(make_runtime):
    rt = make_runtime()
    closing = _close(
        rt, 1, lambda fence: OrderEnding(fence, Outcome.FINISHED, output_tokens=10**20, model="m")
    )
    row = orders.get(rt.db, 1)
    assert closing.landed and row.finished_at is not None
    assert (row.outcome, row.output_tokens, row.model) == ("finished", None, None)
    assert "the agent's figures were not stored" in row.detail
    assert "out of range" in row.detail
    assert bundles.get(rt.db, 1) is not None  # the work is kept


def test_an_ending_that_cannot_be_written_plainer_ends_badly_bare_with_a_sentence(make_runtime):
    rt = make_runtime()
    closing = _close(rt, 2, lambda fence: OrderEnding(fence, Outcome.FINISHED, detail="a\x00b"))
    row = orders.get(rt.db, 2)
    assert closing.landed and row.finished_at is not None
    assert row.outcome == "ended badly"
    assert row.detail.startswith("the ending could not be written:")


def test_a_python_agents_absurd_usage_ends_its_order_and_frees_its_lane(make_runtime):
    rt = make_runtime(AGENT=AGENT + "reports_absurd_usage")
    _queue(rt, 3)
    assert claimer_of(rt).run_once().started == (3,)
    order = wait_for_ending(rt.db, 3)
    assert order.outcome == "finished" and order.output_tokens is None
    assert bundles.get(rt.db, 3) is not None


def test_an_agent_printing_twenty_digits_ends_its_order_finished(make_runtime):
    line = "HIVE-USAGE: provider=acme model=m input=5 output=99999999999999999999"
    rt = make_runtime(AGENT=f"command:echo '{line}'; echo 'HIVE-USAGE: output=²'")
    _queue(rt, 4)
    assert claimer_of(rt).run_once().started == (4,)
    order = wait_for_ending(rt.db, 4)
    assert order.outcome == "finished"
    assert (order.input_tokens, order.output_tokens) == (None, None)


def test_a_restart_re_dispatches_a_stuck_order_and_it_ends_this_time(make_runtime):
    from hive.actors.queen.queen import Queen
    from hive.actors.reaper.reaper import Reaper
    from tests.live.runtime.test_reaper import local_order

    line = "HIVE-USAGE: output=99999999999999999999"
    rt = make_runtime(AGENT=f"command:echo '{line}'; echo done > src/app.py")
    local_order(rt, 5)  # the order a Queen's bee left running when the ending failed
    config = configs.queen_config(rt.settings)
    queen = Queen(queen_ports(rt), config, free_memory=lambda: None, reaps_at_boot=True)
    assert queen.run_once().idle == "waiting for the boot reaper"
    reaper = Reaper(reaper_ports(rt), rt.reaper)
    reaper.ask_boot()  # what her ReapAtBoot asks of the reaper's actor
    assert reaper.run_once().boot == (5,)
    queen.boot_reaped()  # what its BootReaped tells her actor
    assert queen.run_once().dispatched == (5,)  # reaped at boot, then dispatched again
    order = wait_for_ending(rt.db, 5)
    assert (order.outcome, order.output_tokens) == ("finished", None)
    assert [h.snapshot["outcome"] for h in orders.history(rt.db, 5)] == ["reaped at boot"]


def test_a_round_over_many_unshaped_issues_writes_a_bounded_report(make_runtime):
    from hive.actors.queen.queen import Queen
    from hive.rules.report import REPORT_LINES_MAX
    from hive.store import reports

    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    for n in range(1, 251):
        add_issue(rt.db, n, boundary=())
    queen = Queen(queen_ports(rt), configs.queen_config(rt.settings), free_memory=lambda: None)
    queen.run_once()
    (report,) = reports.latest(rt.db, 1)
    lines = report.body.splitlines()
    assert len(lines) == REPORT_LINES_MAX + 1
    assert lines[0].startswith("#1: ") and lines[-1].startswith("... and 150 more not named")
