"""The end of a turn (DESIGN 5.6).

It runs once a bee's turn is over. It works out the order's outcome, salvages what the
turn left uncommitted and bundles `base..queen-<issue>`. Then one fenced statement (one
round trip) writes the ending, its bundle, the conversation the agent left and the
NOTIFY. So no ended row lacks its bundle or conversation, and a fenced-out turn writes
nothing."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg_pool import ConnectionPool

from hive import prices
from hive.agents import Ending, TurnOutcome
from hive.agents.conversation import RESUMING_AGENTS, Conversation
from hive.agents.protocol import Usage
from hive.git.bundles import BundleTooLarge, bundle
from hive.git.cutback import cut_back
from hive.git.repo import Checkout, own_repo
from hive.git.salvage import Salvage, salvage
from hive.metrics import HiveMetrics
from hive.rules.branches import branch_name
from hive.rules.keys import refusal_outcome, sort_refusal
from hive.rules.rests import QUOTA_REST_SECONDS
from hive.rules.spend import Cost, PriceTable, cost_of, price_of
from hive.rules.states import (
    ENDED_BADLY,
    ENDED_UNEXPECTEDLY,
    FINISHED,
    HANDED_BACK,
    REFUSED_OUTCOME,
    Outcome,
)
from hive.rules.text import shown
from hive.store import credits, endings
from hive.store.bundles import NewBundle
from hive.store.credits import Moved
from hive.store.db import connection
from hive.store.endings import OrderEnding
from hive.store.orders import Fence
from hive.store.transitions import Move

if TYPE_CHECKING:
    from hive.actors.ending_group import EndingGroup

log = logging.getLogger("hive.bee")

# an ending that meets the store away (a restart, a failover) is tried again, the pause
# doubling from the first to the last, for this long; then once in each plainer form
# (`write_ending`): given up, the bundle is lost and the order waits for the reaper
END_RETRY_WINDOW_SECONDS = 120.0
END_RETRY_FIRST_SECONDS = 1.0
END_RETRY_MAX_SECONDS = 10.0
# the order's outcome of a turn that ended by itself
_NATURAL = {
    TurnOutcome.FINISHED: FINISHED,
    TurnOutcome.ENDED_BADLY: ENDED_BADLY,
    TurnOutcome.ENDED_UNEXPECTEDLY: ENDED_UNEXPECTEDLY,
}
BARE = "bare"  # the last form of an ending: no figures, no bundle, no sale


def order_outcome(ending: Ending, handed_back: bool) -> tuple[Outcome, str | None]:
    """The order's outcome label (RULES 4) and a detail sentence, from how the turn ended.

    A turn we stopped to hand it back is `handed back`. A turn stopped past its bound
    ended badly. The keys card sorts a provider's refusal; a quota is `quota exhausted`.
    Any other turn gets the adapter's own label."""
    turn = ending.outcome
    if turn is TurnOutcome.STOPPED:
        if handed_back:
            return HANDED_BACK, None
        if ending.at_bound:
            return ENDED_BADLY, f"stopped {ending.stop_reason}"
        return ENDED_BADLY, f"stopped: {ending.stop_reason}"
    if turn is TurnOutcome.REFUSED:
        kind = ending.refusal or ""
        outcome = refusal_outcome(sort_refusal(kind))
        return outcome or REFUSED_OUTCOME, f"the provider refused the turn ({kind})"
    natural = _NATURAL.get(turn) if isinstance(turn, TurnOutcome) else None
    if natural is not None:
        return natural, None
    # an adapter's word outside its closed set ends the order all the same, and says it
    return ENDED_UNEXPECTEDLY, f"the agent's turn ended with {shown(str(turn))!r}"


@dataclass(frozen=True)
class Accounting:
    """How an ending is priced and how long its key rests. It holds the price table and
    the provider and model to assume when the agent does not say (HIVE_WORKER_PROVIDER,
    HIVE_WORKER_MODEL). It also holds a quota's rest for when the agent gave no reset
    time (HIVE_QUOTA_REST_SECONDS)."""

    prices: PriceTable = field(default_factory=dict)
    provider: str | None = None
    model: str | None = None
    quota_rest_seconds: int = QUOTA_REST_SECONDS

    @classmethod
    def packaged(cls) -> Accounting:
        """The packaged price table, and no provider or model to fall back on."""
        return cls(prices.load())

    def cost(self, usage: Usage | None) -> Cost | None:
        """What a turn that reported `usage` cost (hive/rules/spend.py); None: unknown."""
        if usage is None:
            return None
        price = price_of(self.prices, usage.provider or self.provider, usage.model or self.model)
        return cost_of(usage.cost_usd, usage.input_tokens, usage.output_tokens, price)


def order_ending(
    fence: Fence,
    ending: Ending,
    handed_back: bool,
    accounting: Accounting | None = None,
    *,
    agent: str = "",
    conversation: Conversation | None = None,
) -> OrderEnding:
    """The order's ending as the turn left it. It carries the outcome and detail
    (`order_outcome`), the usage the agent reported, its cost and a refusal's reset
    time. For an `agent` that resumes conversations it also carries the `conversation`
    the turn left. None means the turn left none, and the issue's earlier one goes.
    Closing adds the salvage and the bundle."""
    outcome, detail = order_outcome(ending, handed_back)
    usage = ending.usage
    counted = accounting or Accounting()
    return OrderEnding(
        fence,
        outcome,
        detail,
        input_tokens=usage.input_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
        provider=usage.provider if usage else None,
        model=usage.model if usage else None,
        cost=counted.cost(usage),
        resets_at=ending.resets_at,
        quota_rest_seconds=counted.quota_rest_seconds,
        keeps_conversation=agent in RESUMING_AGENTS,
        conversation=conversation if agent in RESUMING_AGENTS else None,
    )


@dataclass(frozen=True)
class Leftover:
    """Where a turn left its work: what the closing salvages and bundles."""

    worktree: Path
    boundary: tuple[str, ...]
    base_ref: str  # the base the bundle names
    base_rev: str  # the commit the branch was cut from: the bundle is base_rev..branch


@dataclass(frozen=True)
class Closing:
    """What one ending wrote, or would have written had its fence held (`landed` says
    which). `sold` is the sale of its turn that landed with it; None means nothing was
    sold."""

    landed: bool
    ending: OrderEnding
    sold: Moved | None = None

    @property
    def outcome(self) -> str:
        return self.ending.outcome

    @property
    def salvaged_files(self) -> tuple[str, ...]:
        return self.ending.salvaged_files

    @property
    def bundle_bytes(self) -> int:
        return len(self.ending.bundle.data) if self.ending.bundle else 0


def close_order(
    db: ConnectionPool[Any],
    checkout: Checkout,
    metrics: HiveMetrics,
    ending: OrderEnding,
    left: Leftover,
    max_bytes: int,
    before_end: Callable[[], None] = lambda: None,
    key_index: int | None = None,
    note: Callable[[str], None] = lambda text: None,
    sells: bool = False,
    group: EndingGroup | None = None,
) -> Closing:
    """Close a turn's order. It runs on the bee's thread once the turn is over.

    It salvages what the turn left uncommitted inside its boundary. When a commit of the
    agent's own carries what the boundary refuses, it cuts the branch back
    (hive/git/cutback.py). It bundles `base_rev..queen-<issue>`. It calls `before_end`,
    where a runner removes its worktree; once the row is ended, a next attempt may cut
    the same path. Last, it ends the order as `ending` says, with the salvage and the
    bundle, fenced.

    A bundle past `max_bytes` ends the order badly, without the bundle. A branch that
    cannot be judged is not bundled. `note` hears a sentence for the transcript about
    what was skipped, left outside or cut. `landed` is False when the row was no longer
    this turn's (reaped or re-dispatched); then nothing was written to it. With `sells`
    the order names a credit account, and the turn is sold in the ending's own
    transaction. `group` is the process's group commit, which writes endings that come
    together in one statement; None writes this one alone."""
    issue = ending.fence.issue
    reason = HANDED_BACK if ending.outcome is HANDED_BACK else FINISHED
    kept = None
    out = None
    with own_repo(checkout) as repo:  # its own Repo object: endings run side by side
        try:
            kept = salvage(left.worktree, left.boundary, reason)
        except Exception as err:  # the work already committed still goes in the bundle
            log.warning("salvage failed: %s", err, extra={"issue": issue})
        for sentence in salvage_notes(kept):
            note(sentence)
        try:
            cut = cut_back(repo, issue, left.base_rev, left.boundary)
            judged = True
        except Exception as err:  # unjudged, nothing of the branch may leave
            judged = False
            log.warning("branch not judged: %s", err, extra={"issue": issue})
            note(f"the branch could not be judged against its boundary ({err}): not bundled")
        else:
            if cut.sha is not None:
                note(cut.sentence(branch_name(issue)))
        try:
            out = bundle(repo, issue, left.base_rev, max_bytes) if judged else None
        except BundleTooLarge as err:
            ending = replace(ending, outcome=ENDED_BADLY, detail=str(err))
        except Exception as err:
            log.warning("bundle failed: %s", err, extra={"issue": issue})
    ending = replace(
        ending,
        salvaged_sha=kept.sha if kept else None,
        salvaged_files=kept.committed if kept else (),
        bundle=None
        if out is None
        else NewBundle(branch_name(issue), left.base_ref, out.base_sha, out.head_sha, out.data),
    )
    before_end()
    moved, sold = group.write(ending, sells) if group else write_ending(db, ending, sells)
    if moved.illegal:
        metrics.illegal_transitions.inc()
    if moved.landed and ending.bundle is not None:
        metrics.bundle_bytes.observe(len(ending.bundle.data))
    if moved.landed and ending.cost is not None:
        metrics.spend(key_index, ending.cost.usd)
    return Closing(moved.landed, ending, sold)


def salvage_notes(kept: Salvage | None) -> list[str]:
    """The transcript's sentences about a salvage: the special files it skipped and the
    changed paths it left outside the boundary."""
    if kept is None:
        return []
    notes = []
    if kept.skipped:
        notes.append(
            "skipped, never opened (a FIFO, socket or device node): " + _named(kept.skipped)
        )
    if kept.outside:
        notes.append("left outside the boundary, not committed: " + _named(kept.outside))
    return notes


def _named(paths: tuple[str, ...], most: int = 20) -> str:
    """At most `most` of the paths, each with its control characters escaped. A newline
    in a file's name would otherwise forge a transcript line."""
    named = ", ".join(shown(path) for path in paths[:most])
    return named + (f" and {len(paths) - most} more" if len(paths) > most else "")


def end_and_sell(db: ConnectionPool[Any], ending: OrderEnding) -> tuple[Move, Moved | None]:
    """End the order and sell its turn to the account the order names, in one
    transaction (hive/store/credits.py). No ending lands without its sale, and no sale
    without its ending. A redelivered ending is fenced out and sells nothing."""
    with connection(db) as conn, conn.transaction():
        moved = endings.end(conn, ending)
        if not moved.landed:
            return moved, None
        fence, cost = ending.fence, ending.cost
        sold = credits.sell_order_turn(
            conn, fence.issue, fence.conversation_id, None if cost is None else cost.usd
        )
    return moved, sold


def write_ending(
    db: ConnectionPool[Any], ending: OrderEnding, sells: bool = False
) -> tuple[Move, Moved | None]:
    """Write `ending`, and sell its turn when `sells`. No order may stay running once its
    turn is over, so a refused write is tried in plainer forms. The store refuses a
    value it cannot hold, or is away past the retry window. The second form leaves out
    what the agent reported, and its turn is sold as unpriced. The last form is bare:
    ended badly, with a sentence saying why, and sold to no one (a ledger that refuses
    must not keep an order running). When the last form fails too, its error is raised
    and the reaper is left to end the order."""
    issue = ending.fence.issue
    deadline = time.monotonic() + END_RETRY_WINDOW_SECONDS
    forms = iter(_plainer(ending))
    form = ending
    while True:
        try:
            return _end_retrying(db, form, deadline, sells)
        except Exception as err:
            after = next(forms, None)
            if after is None:
                raise
            sells = sells and after[0] != BARE
            why = shown(str(err).splitlines()[0] if str(err) else type(err).__name__)[:200]
            log.warning(
                "the ending was not written (%s); writing it %s",
                why,
                after[0],
                extra={"issue": issue},
            )
            form = after[1](why)


def _plainer(ending: OrderEnding) -> list[tuple[str, Callable[[str], OrderEnding]]]:
    """The plainer forms of `ending`, in order. Each is made with the reason the one
    before failed. The first leaves out the agent's figures and conversation. The
    second is bare, with no bundle."""

    def without_figures(why: str) -> OrderEnding:
        note = f"the agent's figures were not stored: {why}"
        return replace(
            ending,
            detail=f"{ending.detail}; {note}" if ending.detail else note,
            input_tokens=None,
            output_tokens=None,
            provider=None,
            model=None,
            cost=None,
            resets_at=None,
            conversation=None,
            keeps_conversation=False,
        )

    def bare(why: str) -> OrderEnding:
        return OrderEnding(ending.fence, ENDED_BADLY, f"the ending could not be written: {why}")

    return [("without the agent's figures", without_figures), (BARE, bare)]


def _end_retrying(
    db: ConnectionPool[Any], ending: OrderEnding, deadline: float, sells: bool
) -> tuple[Move, Moved | None]:
    """`endings.end` (with its sale when `sells`), tried again while the store is away,
    until `deadline`."""
    pause = threading.Event()  # never set: a bounded pause between attempts
    wait = END_RETRY_FIRST_SECONDS
    while True:
        try:
            if sells:
                return end_and_sell(db, ending)
            return endings.end(db, ending), None
        except psycopg.OperationalError as err:  # the store is away; anything else is a bug
            if time.monotonic() + wait > deadline:
                raise
            log.warning(
                "ending failed (%s); trying again in %gs",
                err,
                wait,
                extra={"issue": ending.fence.issue},
            )
            pause.wait(wait)
            wait = min(wait * 2, END_RETRY_MAX_SECONDS)
