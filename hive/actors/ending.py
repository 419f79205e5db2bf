"""The end of a turn (DESIGN 5.6): its outcome, the salvage of what it left uncommitted,
the bundle of `base..queen-<issue>`, and the ending with its bundle in one statement,
fenced, so no ended row is without its bundle and a fenced-out turn writes nothing."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from hive.agents import REASON_BOUND, REFUSED, STOPPED, Ending
from hive.git.bundles import BundleTooLarge, bundle
from hive.git.repo import Checkout, own_repo
from hive.git.salvage import salvage
from hive.metrics import HiveMetrics
from hive.rules.keys import refusal_outcome, sort_refusal
from hive.rules.states import ENDED_BADLY, HANDED_BACK, REFUSED_OUTCOME
from hive.store import orders
from hive.store.bundles import NewBundle
from hive.store.orders import Fence

log = logging.getLogger("hive.bee")

# an ending that meets the store away (a restart, a failover) is tried again, the pause
# doubling from the first to the last, for this long: given up, the bundle is lost and
# the order waits HIVE_RUNNER_SILENT_MINUTES for the reaper (its heartbeat has stopped)
END_RETRY_WINDOW_SECONDS = 120.0
END_RETRY_FIRST_SECONDS = 1.0
END_RETRY_MAX_SECONDS = 10.0


def order_outcome(ending: Ending, handed_back: bool) -> tuple[str, str | None]:
    """The order's outcome label (RULES 4) and a detail sentence, from how the turn ended.

    A turn we stopped to hand it back is `handed back`; one stopped past its bound ended
    badly; a provider's refusal is sorted by the keys card (a quota is `quota
    exhausted`); otherwise the adapter's own label is the order's."""
    if ending.outcome == STOPPED:
        if handed_back:
            return HANDED_BACK, None
        if ending.stop_reason == REASON_BOUND:
            return ENDED_BADLY, "stopped past its bound (HIVE_TURN_MAX_SECONDS)"
        return ENDED_BADLY, f"stopped: {ending.stop_reason}"
    if ending.outcome == REFUSED:
        kind = ending.refusal or ""
        outcome = refusal_outcome(sort_refusal(kind))
        return outcome or REFUSED_OUTCOME, f"the provider refused the turn ({kind})"
    return ending.outcome, None


@dataclass(frozen=True)
class Closing:
    """What one ending wrote."""

    landed: bool
    outcome: str
    salvaged: str | None  # the salvage commit, None when nothing was left uncommitted
    salvaged_files: tuple[str, ...]
    bundle_bytes: int


def close_order(
    db: ConnectionPool[Any],
    checkout: Checkout,
    metrics: HiveMetrics,
    *,
    fence: Fence,
    worktree: Path,
    boundary: tuple[str, ...],
    base_ref: str,
    base_rev: str,
    outcome: str,
    detail: str | None,
    salvage_reason: str,
    max_bytes: int,
    ending: Ending | None = None,
) -> Closing:
    """Salvage, bundle (`base_rev..queen-<issue>`, the commit the branch was cut from),
    end (fenced). `landed` is False when the row was no longer this
    turn's (reaped or re-dispatched): nothing was written to it."""
    issue = fence.issue
    salvaged: str | None = None
    salvaged_files: tuple[str, ...] = ()
    out = None
    with own_repo(checkout) as repo:  # its own Repo object: endings run side by side
        try:
            kept = salvage(worktree, boundary, salvage_reason)
            salvaged, salvaged_files = kept.sha, kept.committed
        except Exception as err:  # the work already committed still goes in the bundle
            log.warning("salvage failed: %s", err, extra={"issue": issue})
        try:
            out = bundle(repo, issue, base_rev, max_bytes)
        except BundleTooLarge as err:
            outcome, detail = ENDED_BADLY, str(err)
        except Exception as err:
            log.warning("bundle failed: %s", err, extra={"issue": issue})
    stored = None
    if out is not None:
        stored = NewBundle(f"queen-{issue}", base_ref, out.base_sha, out.head_sha, out.data)
    usage = ending.usage if ending is not None else None
    landed = _end(
        db,
        fence,
        outcome,
        stored,
        detail,
        usage.input_tokens if usage else None,
        usage.output_tokens if usage else None,
        salvaged,
        salvaged_files,
        usage.provider if usage else None,
        usage.model if usage else None,
    )
    if landed and stored is not None:
        metrics.bundle_bytes.observe(len(stored.data))
    size = len(stored.data) if stored else 0
    return Closing(landed, outcome, salvaged, salvaged_files, size)


def _end(
    db: ConnectionPool[Any],
    fence: Fence,
    outcome: str,
    stored: NewBundle | None,
    detail: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    salvaged: str | None,
    salvaged_files: tuple[str, ...],
    provider: str | None = None,
    model: str | None = None,
) -> bool:
    pause = threading.Event()  # never set: a bounded pause between attempts
    deadline = time.monotonic() + END_RETRY_WINDOW_SECONDS
    wait = END_RETRY_FIRST_SECONDS
    while True:
        try:
            return orders.end(
                db,
                fence,
                outcome,
                bundle=stored,
                detail=detail,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                salvaged_sha=salvaged,
                salvaged_files=salvaged_files,
                provider=provider,
                model=model,
            )
        except psycopg.OperationalError as err:  # the store is away; anything else is a bug
            if time.monotonic() + wait > deadline:
                raise
            log.warning(
                "ending failed (%s); trying again in %gs", err, wait, extra={"issue": fence.issue}
            )
            pause.wait(wait)
            wait = min(wait * 2, END_RETRY_MAX_SECONDS)
