"""Which waiting endings go into the next statement, as vectors."""

import pytest

from hive.rules.ending_batches import (
    ENDING_BYTES_A_STATEMENT,
    ENDINGS_A_STATEMENT,
    Waiting,
    next_batch,
    one_statement,
)


def waiting(*issues: int, size: int = 0) -> list[Waiting]:
    return [Waiting(i, size) for i in issues]


def test_nothing_waiting_writes_nothing() -> None:
    assert next_batch([]) == 0


def test_one_ending_alone_goes_at_once_whatever_its_size() -> None:
    assert next_batch(waiting(1, size=ENDING_BYTES_A_STATEMENT * 3)) == 1


def test_every_waiting_ending_goes_together_up_to_the_count() -> None:
    assert next_batch(waiting(*range(1, 11))) == 10
    assert next_batch(waiting(*range(1, 11)), most=4) == 4
    assert next_batch(waiting(*range(1, ENDINGS_A_STATEMENT + 2))) == ENDINGS_A_STATEMENT
    assert next_batch(waiting(*range(1, ENDINGS_A_STATEMENT + 1))) == ENDINGS_A_STATEMENT


def test_a_second_ending_of_one_issue_waits_for_the_next_statement() -> None:
    assert next_batch(waiting(1, 2, 1, 3)) == 2
    assert next_batch(waiting(1, 1)) == 1


def test_the_bytes_stop_the_statement_before_the_ending_that_would_pass_them() -> None:
    assert next_batch(waiting(1, 2, 3, size=40), most_bytes=100) == 2
    assert next_batch(waiting(1, 2, 3, size=50), most_bytes=100) == 2
    assert next_batch(waiting(1, 2, 3, size=34), most_bytes=100) == 2
    assert next_batch(waiting(1, 2, 3, size=33), most_bytes=100) == 3
    assert next_batch([Waiting(1, 0), Waiting(2, 101)], most_bytes=100) == 1


def test_refusals_go_last_and_an_ending_after_one_waits_for_the_next_statement() -> None:
    fin, ref = Waiting(1), Waiting(2, rests_key=True)
    assert next_batch([fin, ref, Waiting(3, rests_key=True), Waiting(4)]) == 3
    assert next_batch([ref, fin]) == 1
    assert next_batch([fin, Waiting(3), ref]) == 3


def test_one_statement_takes_any_count_and_size_but_no_issue_twice_nor_a_refusal_first() -> None:
    assert one_statement([])
    assert one_statement(waiting(*range(1, ENDINGS_A_STATEMENT + 5), size=ENDING_BYTES_A_STATEMENT))
    assert not one_statement(waiting(1, 2, 1))
    assert not one_statement([Waiting(1, rests_key=True), Waiting(2)])
    assert one_statement([Waiting(1), Waiting(2, rests_key=True)])


@pytest.mark.parametrize(("most", "most_bytes"), [(0, 1), (1, 0), (-1, 5)])
def test_a_bound_under_one_is_refused(most: int, most_bytes: int) -> None:
    with pytest.raises(ValueError, match="at least one"):
        next_batch(waiting(1), most=most, most_bytes=most_bytes)
