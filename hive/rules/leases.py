"""Leases and the Queen lease (RULES 3; control.t27 section 2).

A lease is held by at most one holder at a time and fenced: every claim bumps the fence,
every write made under the lease carries the fence it was claimed at, and a write whose
fence is not the current one does not land. The fence never goes back, not even on
release, so a holder that lost its lease can never write again by accident.
"""

from __future__ import annotations

from dataclasses import dataclass

# A task lease lapses this long after its last renewal; the heartbeat renews it three
# times per TTL, so one missed or slow renewal never loses it.
TASK_LEASE_TTL_SECONDS = 180
TASK_HEARTBEAT_SECONDS = 60

# One Queen at a time: the Queen lease follows the same rules, renewed every 60 s.
QUEEN_LEASE_TTL_SECONDS = 180
QUEEN_LEASE_RENEW_SECONDS = 60


def reclaimable(live_holder: bool, since_renewal_seconds: int) -> bool:
    """Whether another process may take a task: never from a live holder that renews."""
    if live_holder:
        return False
    return since_renewal_seconds >= TASK_LEASE_TTL_SECONDS


@dataclass(frozen=True)
class Lease:
    """A lease as the store holds it: who has it, its fence, and when it lapses."""

    holder: str | None
    fence: int
    expires_at_seconds: int


def is_free(lease: Lease, now_seconds: int) -> bool:
    """Nobody holds it, or its holder's time has run out."""
    return lease.holder is None or now_seconds >= lease.expires_at_seconds


def claim(
    lease: Lease,
    claimant: str,
    seen_fence: int,
    now_seconds: int,
    ttl_seconds: int = TASK_LEASE_TTL_SECONDS,
) -> Lease | None:
    """The lease after `claimant` claims it, or None when the claim does not land.

    It lands only if the fence is still the one the claimant read (nobody claimed in
    between) and the lease is free, expired, or already the claimant's (a renewal).
    """
    if lease.fence != seen_fence:
        return None
    if not (is_free(lease, now_seconds) or lease.holder == claimant):
        return None
    return Lease(claimant, lease.fence + 1, now_seconds + ttl_seconds)


def release(lease: Lease, holder: str, now_seconds: int) -> Lease:
    """The lease after `holder` lets it go: expired now, fence unchanged.

    Only its holder can release it; anyone else's release changes nothing.
    """
    if lease.holder != holder:
        return lease
    return Lease(None, lease.fence, min(lease.expires_at_seconds, now_seconds))


def write_lands(write_fence: int, lease_fence: int) -> bool:
    """A write made under a lease lands only at the lease's current fence."""
    return write_fence == lease_fence
