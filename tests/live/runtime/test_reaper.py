"""The reapers against the real store: the boot reaper ends only the Queen's own orders
(salvaging them here), the stall reaper releases silent runners' orders and ends stalled
turns, never a queued order nobody claimed and never an order whose bee runs here."""

from __future__ import annotations

import pytest

from hive.actors.messages import QUEEN, BootReaped
from hive.actors.reaper.reaper import Reaper, ReaperConfig
from hive.git.worktrees import cut_worktree
from hive.runtime import reaper_ports
from hive.store import orders, reaping
from hive.store.orders import NewOrder
from tests.live.runtime.conftest import AGENT, Inbox, add_issue, queue
from tests.live.runtime.test_queen import queen_of
from tests.live.runtime.test_runner import claimer_of
from tests.live.store.conftest import backdate


def local_order(rt, issue: int, leftover: str | None = None) -> None:
    """An order the Queen ran herself, with its worktree here (and a file left in it)."""
    add_issue(rt.db, issue)
    new = NewOrder(issue, f"queen-{issue}", "main", owned_paths=("src/app.py",))
    assert orders.insert(rt.db, new, queued=False) is orders.Insertion.WRITTEN
    cut = cut_worktree(rt.checkout.repo, issue, "main", rt.checkout.workdir)
    if leftover is not None:
        (cut.path / "src/app.py").write_text(leftover)


def runner_order(rt, issue: int, runner: str = "ghost-runner") -> None:
    queue(rt, issue)
    claimed = orders.claim(rt.db, runner)
    assert claimed is not None and claimed.issue == issue


def backdated(rt, issue: int, column: str, minutes: float) -> None:
    with rt.db.connection() as conn:
        backdate(conn, issue, column, minutes)


def head_message(rt, issue: int) -> bytes:
    return rt.checkout.repo[rt.checkout.repo.refs[f"refs/heads/queen-{issue}".encode()]].message


@pytest.mark.through_pgbouncer
def test_boot_reaper_ends_only_the_queens_own_orders_and_salvages_them(make_runtime):
    rt = make_runtime()
    local_order(rt, 1, leftover="left by a bee the restart killed\n")
    runner_order(rt, 2)
    queen = Inbox()
    rt.names.register(QUEEN, queen)
    result = Reaper(reaper_ports(rt), rt.reaper).boot()
    assert result.boot == (1,) and result.salvaged == (1,)
    assert orders.get(rt.db, 1).outcome == "reaped at boot"  # type: ignore[union-attr]
    assert orders.get(rt.db, 2).finished_at is None  # type: ignore[union-attr]
    assert head_message(rt, 1).startswith(b"salvage (reaped)")
    reaped = orders.get(rt.db, 1)
    assert reaped is not None and reaped.salvaged_at is not None
    assert reaped.salvaged_sha == rt.checkout.repo.refs[b"refs/heads/queen-1"].decode()
    assert reaped.salvaged_files and len(reaped.salvaged_files) == 1
    assert rt.metrics.reaped.labels(reaper="boot")._value.get() == 1
    assert queen.messages() == [BootReaped((1,))]  # she decides, at once


def test_boot_reaper_spares_an_order_whose_bee_runs_here(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_released")
    add_issue(rt.db, 3)
    queen_of(rt).run_once()
    assert rt.host.issues() == {3}
    assert Reaper(reaper_ports(rt), rt.reaper).boot().boot == ()
    assert orders.get(rt.db, 3).finished_at is None  # type: ignore[union-attr]


def test_the_boot_pass_runs_in_the_reapers_pass_when_asked_and_is_asked_again_after_a_raise(
    make_runtime, monkeypatch
):
    import psycopg

    rt = make_runtime()
    local_order(rt, 1)
    queen = Inbox()
    rt.names.register(QUEEN, queen)
    reaper = Reaper(reaper_ports(rt), rt.reaper)
    assert reaper.run_once().boot == ()  # not asked: a stall pass only
    assert orders.get(rt.db, 1).finished_at is None  # type: ignore[union-attr]
    reap_at_boot, tries = reaping.reap_at_boot, []

    def meeting_a_store_blip(*args, **kwargs):
        tries.append(1)
        if len(tries) == 1:
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return reap_at_boot(*args, **kwargs)

    monkeypatch.setattr(reaping, "reap_at_boot", meeting_a_store_blip)
    reaper.ask_boot()  # the Queen's ReapAtBoot
    with pytest.raises(psycopg.OperationalError):
        reaper.run_once()
    assert queen.messages() == []  # nothing ran: she keeps waiting, and asking
    assert reaper.run_once().boot == (1,)  # still asked: the next pass boots
    assert queen.messages() == [BootReaped((1,))]
    assert reaper.run_once().boot == ()  # once it ran, never again
    assert len(tries) == 2


def test_the_boot_reaper_is_off_in_a_runner_only_process(make_runtime):
    rt = make_runtime(ROLE="runner")
    local_order(rt, 4)
    assert Reaper(reaper_ports(rt), rt.reaper).boot().boot == ()
    assert orders.get(rt.db, 4).finished_at is None  # type: ignore[union-attr]


@pytest.mark.through_pgbouncer
def test_stall_reaper_releases_a_silent_runners_order_without_salvage(make_runtime):
    rt = make_runtime(RUNNER_SILENT_MINUTES="0.5")
    runner_order(rt, 5)
    backdated(rt, 5, "claimed_at", 1)
    queue(rt, 6)  # queued, nobody claimed it: never reaped
    result = Reaper(reaper_ports(rt), rt.reaper).run_once()
    assert result.silent == (5,) and result.salvaged == ()
    assert orders.get(rt.db, 5).outcome == "reaped: runner silent"  # type: ignore[union-attr]
    assert orders.get(rt.db, 6).finished_at is None  # type: ignore[union-attr]
    assert rt.metrics.reaped.labels(reaper="stall")._value.get() == 1


def test_stall_reaper_never_touches_an_order_whose_bee_runs_here(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_released", RUNNER_SILENT_MINUTES="0.5")
    queue(rt, 7)
    assert claimer_of(rt).run_once().started == (7,)
    backdated(rt, 7, "claimed_at", 1)
    assert Reaper(reaper_ports(rt), rt.reaper).run_once().silent == ()
    assert orders.get(rt.db, 7).finished_at is None  # type: ignore[union-attr]


def test_two_hour_rule_ends_a_stalled_local_turn_and_salvages_it(make_runtime):
    rt = make_runtime(STALL_MINUTES="2")
    local_order(rt, 8, leftover="a long turn's work\n")
    backdated(rt, 8, "dispatched_at", 3)
    result = Reaper(reaper_ports(rt), rt.reaper).run_once()
    assert result.stalled == (8,) and result.salvaged == (8,)
    outcome = orders.get(rt.db, 8).outcome  # type: ignore[union-attr]
    assert outcome == "reaped: no completion within 2 minutes"
    assert rt.metrics.reaped.labels(reaper="two_hour")._value.get() == 1


def test_the_stall_pass_runs_within_a_quarter_of_the_shortest_window():
    assert ReaperConfig(silent_minutes=10, stall_minutes=120).interval_seconds == 60
    assert ReaperConfig(silent_minutes=0.05, stall_minutes=120).interval_seconds == 0.75
    assert ReaperConfig(silent_minutes=10, stall_minutes=1).interval_seconds == 15
