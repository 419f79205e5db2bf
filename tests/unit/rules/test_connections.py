"""The connection budget per process: 2 idle, 3 with bees, LISTEN included."""

from __future__ import annotations

from hive.rules.connections import (
    BUSY_CONNECTIONS,
    IDLE_CONNECTIONS,
    connection_budget,
    pool_size,
    within_budget,
)


def test_a_process_holds_two_connections_idle_and_three_with_bees() -> None:
    assert (IDLE_CONNECTIONS, BUSY_CONNECTIONS) == (2, 3)
    assert connection_budget(0) == 2
    assert connection_budget(1) == connection_budget(8) == 3


def test_the_pool_leaves_room_for_the_listen_connection() -> None:
    assert pool_size(0, listens=True) == 1
    assert pool_size(1, listens=True) == 2
    assert pool_size(0, listens=False) == 2
    assert pool_size(5, listens=False) == 3


def test_sixty_four_runners_fit_in_two_hundred_connections_even_busy() -> None:
    assert 64 * connection_budget(1) <= 200


def test_within_budget_counts_listen_in() -> None:
    assert within_budget(2, 0) and not within_budget(3, 0)
    assert within_budget(3, 1) and not within_budget(4, 1)


def test_a_runner_writes_its_row_first_on_a_change_and_once_a_poll() -> None:
    from hive.rules.connections import seen_due

    assert seen_due(None, changed=False, every_seconds=15)
    assert seen_due(0.1, changed=True, every_seconds=15)
    assert not seen_due(14.9, changed=False, every_seconds=15)
    assert seen_due(15.0, changed=False, every_seconds=15)
