"""RULES 3: task leases, the Queen lease, and their fence."""

from hive.rules.leases import (
    QUEEN_LEASE_RENEW_SECONDS,
    QUEEN_LEASE_TTL_SECONDS,
    TASK_HEARTBEAT_SECONDS,
    TASK_LEASE_TTL_SECONDS,
    Lease,
    claim,
    is_free,
    reclaimable,
    release,
    write_lands,
)

FREE = Lease(None, 7, 0)


def test_the_heartbeat_renews_three_times_per_ttl() -> None:
    assert TASK_LEASE_TTL_SECONDS == 180
    assert TASK_HEARTBEAT_SECONDS == 60
    assert TASK_HEARTBEAT_SECONDS * 3 == TASK_LEASE_TTL_SECONDS
    assert QUEEN_LEASE_RENEW_SECONDS == 60
    assert QUEEN_LEASE_RENEW_SECONDS * 3 == QUEEN_LEASE_TTL_SECONDS


def test_a_task_is_reclaimable_only_once_its_lease_lapsed_and_never_from_a_live_holder() -> None:
    assert reclaimable(False, 180) is True
    assert reclaimable(False, 179) is False
    assert reclaimable(False, 10_000) is True
    assert reclaimable(True, 10_000) is False


def test_a_claim_on_a_free_lease_lands_and_bumps_the_fence() -> None:
    got = claim(FREE, "runner-a", 7, now_seconds=100)
    assert got == Lease("runner-a", 8, 100 + TASK_LEASE_TTL_SECONDS)


def test_a_claim_with_a_stale_fence_does_not_land() -> None:
    assert claim(FREE, "runner-a", 6, now_seconds=100) is None


def test_a_claim_on_a_lease_someone_else_holds_does_not_land_until_it_expires() -> None:
    held = Lease("runner-a", 8, 280)
    assert is_free(held, 279) is False
    assert claim(held, "runner-b", 8, now_seconds=279) is None
    assert is_free(held, 280) is True
    assert claim(held, "runner-b", 8, now_seconds=280) == Lease("runner-b", 9, 460)


def test_the_holder_renews_its_own_lease_with_a_new_fence() -> None:
    held = Lease("queen-1", 8, 280)
    renewed = claim(held, "queen-1", 8, now_seconds=160, ttl_seconds=QUEEN_LEASE_TTL_SECONDS)
    assert renewed == Lease("queen-1", 9, 340)


def test_release_expires_the_lease_and_never_lowers_the_fence() -> None:
    held = Lease("runner-a", 8, 280)
    released = release(held, "runner-a", now_seconds=150)
    assert released == Lease(None, 8, 150)
    assert is_free(released, 150) is True
    # a release after the lease already lapsed keeps the earlier expiry
    assert release(held, "runner-a", now_seconds=500) == Lease(None, 8, 280)
    # the next claim goes on from the fence, never back
    again = claim(released, "runner-b", 8, now_seconds=151)
    assert again is not None and again.fence == 9


def test_only_the_holder_can_release() -> None:
    held = Lease("runner-a", 8, 280)
    assert release(held, "runner-b", now_seconds=150) is held


def test_a_write_lands_only_at_the_current_fence() -> None:
    assert write_lands(8, 8) is True
    assert write_lands(7, 8) is False
    assert write_lands(9, 8) is False
