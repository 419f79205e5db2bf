"""The e2e tests' world (tests/e2e/runtime/harness.py), and the guarantee that no test
leaves a process behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from hive.swarm import processes_under

from .runtime.harness import World


@pytest.fixture
def world(tmp_path: Path, hive_db_url: str) -> Iterator[World]:
    # tmp_path is under /tmp and unique: every process the test starts lives under it
    with psycopg.connect(hive_db_url, autocommit=True) as db:
        made = World(tmp_path, hive_db_url, db)
        try:
            yield made
        finally:
            made.cleanup()
    assert processes_under(tmp_path) == [], "processes survived the test's cleanup"
