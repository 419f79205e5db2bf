"""`hive bench peers`' measuring, each system on a scratch database of the real server:
every job run exactly once in the drains, a pick-up for every queued job, and a killed
worker's job started again on the other worker."""

from __future__ import annotations

import argparse

import pytest

from hive.bench import peers
from hive.errors import HiveError
from hive.store import scratch

pytestmark = [pytest.mark.live, pytest.mark.e2e]

ARGS = argparse.Namespace(workers=2, batch=3, jobs=30, samples=3, rate=20, window=1.0)


def measured(hive_pg_url: str, system: peers._System) -> dict[str, float]:
    with scratch.database(hive_pg_url, prefix="test_peers") as db:
        if system is peers._PGQUEUER:
            peers.pw.install_pgqueuer(db)
        if system is peers._PROCRASTINATE:
            peers.pw.install_procrastinate(db)
        return peers._system(db, ARGS, system)


def test_the_hives_drain_runs_every_job_once_and_each_pickup_is_timed(hive_pg_url: str) -> None:
    row = measured(hive_pg_url, peers._HIVE)
    assert row["per_s_batch_1"] > 0 and row["per_s_batch_3"] > 0
    assert 0 < row["pickup_p50_ms"] <= row["pickup_p99_ms"]
    assert "rescue_s" not in row  # the hive's rescue runs on real `hive serve` processes


@pytest.mark.parametrize("system", [peers._PGQUEUER, peers._PROCRASTINATE], ids=lambda s: s.name)
def test_a_peer_is_measured_the_same_way_and_its_killed_job_runs_again(
    hive_pg_url: str, system: peers._System
) -> None:
    row = measured(hive_pg_url, system)
    assert row["per_s_batch_1"] > 0 and row["per_s_batch_3"] > 0
    assert 0 < row["pickup_p50_ms"] <= row["pickup_p99_ms"]
    # started again after the kill, by its own mechanism (within the bench's 10 windows)
    assert 0 < row["rescue_s"] < 10 * ARGS.window
    assert row["rescue_ran_twice"] >= 0


def test_a_drain_that_ran_a_job_twice_or_lost_one_fails_the_bench(
    hive_pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(peers, "_throughput", lambda *a: (1.0, ARGS.jobs + 1))
    with pytest.raises(HiveError, match="ran 31 jobs of 30 at batch 1"):
        measured(hive_pg_url, peers._HIVE)
