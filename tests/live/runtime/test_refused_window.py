"""An order every runner refuses (none has its key) ends after the silent window as
`refused`, with a sentence naming the runners that refused it; a runner that has not
refused it yet, or a window not yet over, keeps it queued (issue 14)."""

from __future__ import annotations

from hive.actors.reaper.reaper import Reaper
from hive.runtime import reaper_ports
from hive.services import history
from hive.store import orders, reports, runners
from tests.live.runtime.conftest import queue


def refused_by(rt, issue: int, *names: str) -> None:
    for name in names:
        runners.register(rt.db, name, 1)
        claimed = orders.claim(rt.db, name)
        assert claimed is not None and claimed.issue == issue
        assert orders.refuse(rt.db, claimed.fence)


def queued_minutes_ago(rt, issue: int, minutes: float) -> None:
    with rt.db.connection() as conn:
        conn.execute(
            "UPDATE hive.queen_dispatch SET queued_at = queued_at - make_interval(secs => %s)"
            " WHERE issue = %s",
            (minutes * 60.0, issue),
        )


def test_an_order_every_runner_refused_ends_after_the_window_naming_them(make_runtime):
    rt = make_runtime(RUNNER_SILENT_MINUTES="0.5", ROLE="queen")
    queue(rt, 9, key_index=1, fingerprint="f" * 16)
    refused_by(rt, 9, "runner-a", "runner-b")
    queued_minutes_ago(rt, 9, 1)
    result = Reaper(reaper_ports(rt), rt.reaper).run_once()
    assert result.refused == (9,)
    assert "ended (every runner refused) #9" in str(result)
    order = orders.get(rt.db, 9)
    assert order is not None and order.finished_at is not None
    assert order.outcome == "refused"
    assert order.detail == (
        "every runner refused it (runner-a, runner-b): none has key #1; give a runner that "
        "key, or the Queen fewer keys"
    )
    assert rt.metrics.reaped.labels(reaper="refused")._value.get() == 1
    assert rt.metrics.illegal_transitions._value.get() == 0  # END, held to the table


def test_a_live_runner_that_has_not_refused_keeps_the_order_queued(make_runtime):
    rt = make_runtime(RUNNER_SILENT_MINUTES="0.5", ROLE="queen")
    queue(rt, 10, key_index=1, fingerprint="f" * 16)
    refused_by(rt, 10, "runner-a")
    runners.register(rt.db, "runner-c", 1)  # seen now, has not reached for it yet
    queued_minutes_ago(rt, 10, 1)
    assert Reaper(reaper_ports(rt), rt.reaper).run_once().refused == ()
    assert orders.get(rt.db, 10).finished_at is None  # type: ignore[union-attr]


def test_an_order_refused_within_the_window_stays_queued(make_runtime):
    rt = make_runtime(RUNNER_SILENT_MINUTES="0.5", ROLE="queen")
    queue(rt, 11, key_index=1, fingerprint="f" * 16)
    refused_by(rt, 11, "runner-a")
    assert Reaper(reaper_ports(rt), rt.reaper).run_once().refused == ()
    assert orders.get(rt.db, 11).finished_at is None  # type: ignore[union-attr]


def test_an_order_no_runner_was_there_to_take_is_said_once_and_stays_queued(make_runtime):
    rt = make_runtime(RUNNER_SILENT_MINUTES="0.5", ROLE="queen")
    queue(rt, 12, key_index=1, fingerprint="f" * 16)
    reaper = Reaper(reaper_ports(rt), rt.reaper)
    reaper.run_once()
    assert not [r for r in reports.latest(rt.db) if "#12" in r.headline]  # within the window
    queued_minutes_ago(rt, 12, 1)
    reaper.run_once()
    reaper.run_once()  # the same issues: said once
    said = [r for r in reports.latest(rt.db) if "#12" in r.headline]
    assert len(said) == 1 and said[0].needs_you
    assert said[0].headline.startswith("#12 queued for a runner, and no runner has been seen")
    assert orders.get(rt.db, 12).finished_at is None  # type: ignore[union-attr]
    assert any("no runner has been seen" in s.text for s in history.why(rt.db, 12))
