import json
import os
import subprocess
import sys

import pytest


def _hive(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "hive", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_the_claim_bench_drains_every_order_once_in_both_runs(hive_pg_url):
    done = _hive(hive_pg_url, "bench", "claim", "--runners", "2", "--orders", "60", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["double_claims"] == 0 and result["bare_double_claims"] == 0
    assert result["claims_per_s"] > 0 and result["bare_claims_per_s"] > 0
    assert result["p99_ms"] >= result["p50_ms"] > 0
    assert result["ratio"] == pytest.approx(result["claims_per_s"] / result["bare_claims_per_s"])


def test_the_latency_bench_reports_notify_and_polling(hive_pg_url):
    done = _hive(hive_pg_url, "bench", "latency", "--samples", "3", "--poll-ms", "20", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["samples"] == 3
    assert result["notify_p50_ms"] > 0 and result["poll_p50_ms"] > 0
    assert result["bare_notify_p50_ms"] > 0


@pytest.mark.parametrize(
    "args",
    [
        ("claim", "--runners", "zero"),
        ("claim", "--runners", "0"),
        ("claim", "--orders", "-5"),
        ("claim", "--bogus"),
        ("latency", "--samples", "many"),
        ("latency", "--poll-ms", "0"),
    ],
)
def test_a_bench_with_nonsense_arguments_gets_argparses_error_and_exit_2(args):
    done = _hive("postgresql://nowhere:1/none", "bench", *args)
    assert done.returncode == 2
    assert "error:" in done.stderr and "Traceback" not in done.stderr


def test_a_bench_against_an_unreachable_database_says_where_in_one_line():
    done = _hive("postgresql://hive:s3cret@127.0.0.1:1/hive", "bench", "claim")
    assert done.returncode == 2
    assert "127.0.0.1:1" in done.stderr and "s3cret" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
