"""The container guard, against a fake cgroup directory and a fake /proc/meminfo."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.agents.guard import BYTES_PER_MB, bees_that_fit, free_memory_bytes

GIB = 1024 * BYTES_PER_MB


def cgroup(tmp_path: Path, limit: str | None, current: str | None) -> Path:
    root = tmp_path / "cgroup"
    root.mkdir()
    if limit is not None:
        (root / "memory.max").write_text(limit + "\n")
    if current is not None:
        (root / "memory.current").write_text(current + "\n")
    return root


@pytest.fixture
def meminfo(tmp_path: Path) -> Path:
    path = tmp_path / "meminfo"
    path.write_text(
        "MemTotal:       16384000 kB\nMemFree:          100000 kB\nMemAvailable:    8000000 kB\n"
    )
    return path


def test_free_memory_is_the_cgroup_limit_minus_its_use(tmp_path: Path, meminfo: Path) -> None:
    root = cgroup(tmp_path, str(2 * GIB), str(GIB // 2))
    assert free_memory_bytes(root, meminfo) == GIB + GIB // 2


def test_use_past_the_limit_leaves_nothing_free(tmp_path: Path, meminfo: Path) -> None:
    root = cgroup(tmp_path, str(GIB), str(GIB + 4096))
    assert free_memory_bytes(root, meminfo) == 0


@pytest.mark.parametrize(("limit", "current"), [("max", "12345"), (None, None), ("junk", "1")])
def test_no_cgroup_limit_falls_back_to_the_hosts_available_memory(
    tmp_path: Path, meminfo: Path, limit: str | None, current: str | None
) -> None:
    root = cgroup(tmp_path, limit, current)
    assert free_memory_bytes(root, meminfo) == 8000000 * 1024


def test_nothing_readable_is_unknown_and_does_not_stop_a_bee(tmp_path: Path) -> None:
    free = free_memory_bytes(tmp_path / "no-cgroup", tmp_path / "no-meminfo")
    assert free is None
    assert bees_that_fit(free, 1024, 1) == 1


@pytest.mark.parametrize(
    ("free_bytes", "bee_memory_mb", "may"),
    [
        (1024 * BYTES_PER_MB, 1024, True),
        (1024 * BYTES_PER_MB - 1, 1024, False),
        (0, 0, True),
        (0, 1, False),
    ],
)
def test_a_bee_starts_only_when_its_memory_fits(
    free_bytes: int, bee_memory_mb: int, may: bool
) -> None:
    assert (bees_that_fit(free_bytes, bee_memory_mb, 1) == 1) is may


def test_this_machine_answers_something_sensible() -> None:
    free = free_memory_bytes()
    assert free is None or free >= 0


def test_bees_that_fit_counts_whole_bees_of_free_memory_up_to_the_free_slots():
    assert bees_that_fit(None, 1024, 3) == 3  # not measured: every slot
    assert bees_that_fit(10 * BYTES_PER_MB, 0, 3) == 3  # a bee needs nothing
    assert bees_that_fit(2500 * BYTES_PER_MB, 1024, 3) == 2
    assert bees_that_fit(5000 * BYTES_PER_MB, 1024, 3) == 3
    assert bees_that_fit(1023 * BYTES_PER_MB, 1024, 3) == 0
    assert bees_that_fit(None, 1024, 0) == bees_that_fit(0, 1024, -1) == 0
