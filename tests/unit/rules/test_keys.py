"""RULES 7: key slots, lanes, choosing a key, refusals and the rest back-off."""

import hashlib

from hive.rules.keys import (
    FINGERPRINT_HEX_DIGITS,
    KEY_REST_CAP_SECONDS,
    KEY_REST_START_SECONDS,
    LANES_PER_KEY_DEFAULT,
    LANES_PER_KEY_MAX,
    REFUSAL_OTHER,
    REFUSAL_QUOTA,
    REFUSAL_TRANSIENT,
    all_busy_sentence,
    choose_key,
    key_fingerprint,
    key_index,
    key_rest_seconds,
    key_slots,
    key_variable,
    lane_count,
    refusal_outcome,
    sort_refusal,
)


def test_the_constants_are_pinned() -> None:
    assert (LANES_PER_KEY_DEFAULT, LANES_PER_KEY_MAX) == (1, 4)
    assert FINGERPRINT_HEX_DIGITS == 16
    assert (KEY_REST_START_SECONDS, KEY_REST_CAP_SECONDS) == (5, 300)


def test_the_variables_map_to_indexes() -> None:
    assert key_index("HIVE_WORKER_KEY") == 0
    assert key_index("HIVE_WORKER_KEY_2") == 1
    assert key_index("HIVE_WORKER_KEY_3") == 2
    assert key_index("HIVE_WORKER_KEY_10") == 9
    assert [key_variable(i) for i in (0, 1, 2, 9)] == [
        "HIVE_WORKER_KEY",
        "HIVE_WORKER_KEY_2",
        "HIVE_WORKER_KEY_3",
        "HIVE_WORKER_KEY_10",
    ]


def test_a_suffix_of_1_or_with_a_leading_zero_is_no_key() -> None:
    not_keys = ("HIVE_WORKER_KEY_1", "HIVE_WORKER_KEY_02", "HIVE_WORKER_KEY_0", "HIVE_WORKER_KEY_")
    for name in (*not_keys, "HIVE_WORKER_KEYS", "HIVE_WORKER_KEY_X", "X_HIVE_WORKER_KEY"):
        assert key_index(name) is None, name


def test_slots_are_trimmed_skip_empty_values_and_come_in_index_order() -> None:
    env = {
        "HIVE_WORKER_KEY_3": " sk-c ",
        "HIVE_WORKER_KEY": "sk-a\n",
        "HIVE_WORKER_KEY_2": "   ",
        "HIVE_WORKER_KEY_02": "sk-z",
        "HIVE_MAX_WORKERS": "4",
    }
    slots = key_slots(env)
    assert [(s.index, s.variable, s.value) for s in slots] == [
        (0, "HIVE_WORKER_KEY", "sk-a"),
        (2, "HIVE_WORKER_KEY_3", "sk-c"),
    ]


def test_a_duplicate_value_keeps_only_its_first_index() -> None:
    env = {"HIVE_WORKER_KEY_4": "same", "HIVE_WORKER_KEY_2": "same ", "HIVE_WORKER_KEY": "one"}
    assert [s.index for s in key_slots(env)] == [0, 1]


def test_a_slot_never_prints_its_key() -> None:
    (slot,) = key_slots({"HIVE_WORKER_KEY": "sk-secret-value"})
    assert "sk-secret-value" not in repr(slot)
    assert slot.fingerprint == key_fingerprint("sk-secret-value")


def test_the_fingerprint_is_the_first_16_hex_digits_of_sha256() -> None:
    assert key_fingerprint("abc") == "ba7816bf8f01cfea"
    assert key_fingerprint("sk-1") == hashlib.sha256(b"sk-1").hexdigest()[:16]
    assert len(key_fingerprint("")) == 16


def test_lanes_multiply_keys() -> None:
    assert lane_count(3, 2) == 6
    assert lane_count(0, 4) == 0


def test_the_least_busy_key_with_a_free_lane_is_chosen() -> None:
    assert choose_key([0, 1, 2], {0: 2, 1: 1, 2: 2}, 3, last_index=None) == 1


def test_ties_go_to_the_first_key_after_the_last_assigned_circularly() -> None:
    assert choose_key([0, 1, 2], {}, 1, last_index=None) == 0
    assert choose_key([0, 1, 2], {}, 1, last_index=0) == 1
    assert choose_key([0, 1, 2], {}, 1, last_index=1) == 2
    assert choose_key([0, 1, 2], {}, 1, last_index=2) == 0
    assert choose_key([0, 2, 5], {}, 1, last_index=3) == 5
    assert choose_key([0, 2, 5], {2: 1}, 2, last_index=0) == 5


def test_a_key_with_every_lane_busy_is_passed_over() -> None:
    assert choose_key([0, 1], {0: 1}, 1, last_index=1) == 1
    assert choose_key([0, 1], {0: 1, 1: 1}, 1, last_index=None) is None
    assert choose_key([], {}, 1, last_index=None) is None


def test_when_every_key_is_busy_the_refusal_names_the_next_variable() -> None:
    assert all_busy_sentence([0, 1], 2) == (
        "every key is busy (2 keys x 2 lanes): add HIVE_WORKER_KEY_3 to run more bees at once"
    )
    assert all_busy_sentence([0, 2], 1) == (
        "every key is busy (2 keys x 1 lanes): add HIVE_WORKER_KEY_2 to run more bees at once"
    )
    assert all_busy_sentence([], 1) == "no worker key is set: set HIVE_WORKER_KEY to run a bee"


def test_refusals_sort_into_quota_transient_and_other() -> None:
    for kind in ("quota", "insufficient_quota", "balance", "billing", "credit", "402"):
        assert sort_refusal(kind) == REFUSAL_QUOTA, kind
    for kind in (
        "rate-limit",
        "overload",
        "rate_limit",
        "rate_limit_error", "overloaded", "overloaded_error", "429",
                 "503", "529"):  # fmt: skip
        assert sort_refusal(kind) == REFUSAL_TRANSIENT, kind
    assert sort_refusal(" Rate_Limit ") == REFUSAL_TRANSIENT
    assert sort_refusal("invalid_api_key") == REFUSAL_OTHER
    assert sort_refusal("") == REFUSAL_OTHER


def test_a_quota_refusal_ends_the_turn_and_a_transient_one_moves_on() -> None:
    assert refusal_outcome(REFUSAL_QUOTA) == "quota exhausted"
    assert refusal_outcome(REFUSAL_TRANSIENT) is None
    assert refusal_outcome(REFUSAL_OTHER) == "ended badly"


def test_a_key_rests_5_s_doubling_to_300_s() -> None:
    assert [key_rest_seconds(n) for n in range(9)] == [0, 5, 10, 20, 40, 80, 160, 300, 300]
    assert key_rest_seconds(10**6) == 300
    assert key_rest_seconds(-1) == 0


def test_the_refusal_names_the_first_key_when_that_one_is_missing() -> None:
    assert all_busy_sentence([1], 1) == (
        "every key is busy (1 keys x 1 lanes): add HIVE_WORKER_KEY to run more bees at once"
    )
