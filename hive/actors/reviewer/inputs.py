"""What a review needs beside its reviewer, and what it leaves on the order (DESIGN 11).

It needs the key it runs on and the context a model reads: earlier send-backs, the
checks' results and the diff against base. Once it ended, it leaves its usage and cost
on its own row of hive.turn_spend, counted on the day it ran. After a refusal it rests
its key, as a bee's ending does.

A review runs on its attempt's own key (the order's `key_index`), so its spend and a
refusal land where the bee's did. When the attempt had no key, it runs on the first key.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from dulwich.repo import Repo

from hive.actors.bee.ending import Accounting
from hive.agents.base import Ending
from hive.agents.review import Context, Review
from hive.git.diff import DIFF_MAX_BYTES, bounded_diff
from hive.metrics import HiveMetrics
from hive.rules.criteria import SENDBACK_HEADING
from hive.rules.keys import KeySlot, refusal_outcome, sort_refusal
from hive.rules.outcome_codes import code_of
from hive.rules.rests import QUOTA_REST_SECONDS, KeyEnding, moves_rest
from hive.rules.states import REFUSED_OUTCOME
from hive.store import credits, keyrests, publish, spend
from hive.store.db import Db, connection
from hive.store.reviews import ReviewRow

log = logging.getLogger("hive.reviewer")

CHECK_LINES_MAX = 5
DIFF_CUT = (
    "The diff is cut at {limit} bytes of {files} changed files: read the files in this "
    "directory for the rest."
)


@dataclass(frozen=True)
class KeyChoice:
    """The key a review runs on (None: none), and how long it still rests (0: it is free)."""

    slot: KeySlot | None
    rest_seconds: int = 0


def key_for(db: Db, row: ReviewRow, slots: tuple[KeySlot, ...]) -> KeyChoice:
    """The attempt's own key (or the first key), with its rest if it rests now."""
    by_index = {slot.index: slot for slot in slots}
    slot = by_index.get(row.key_index) if row.key_index is not None else None
    if slot is None and row.key_index is None and slots:
        slot = slots[0]
    if slot is None:
        return KeyChoice(None)
    for rest in keyrests.resting(db, {slot.index: slot.fingerprint}):
        if rest.key_index == slot.index and rest.seconds_left > 0:
            return KeyChoice(slot, rest.seconds_left)
    return KeyChoice(slot)


def context_of(db: Db, repo: Repo, row: ReviewRow, head: str, files: int) -> Context:
    """What a model reviewer reads beside the criteria."""
    base = row.base_sha or head
    diff = bounded_diff(repo, base, head, DIFF_MAX_BYTES)
    cut = DIFF_CUT.format(limit=DIFF_MAX_BYTES, files=files) if diff.cut else ""
    return Context(
        sendbacks=row.sendbacks,
        sendback_note=sendback_note(row.brief or ""),
        checks=tuple(_check_line(c) for c in publish.checks_of(db, row.issue, CHECK_LINES_MAX)),
        diff=diff.text,
        diff_cut=cut,
    )


def sendback_note(brief: str) -> str:
    """The send-back's notes an attempt's brief carries (empty when none)."""
    _, found, after = brief.partition(SENDBACK_HEADING)
    return after.strip() if found else ""


def _check_line(check: dict[str, Any]) -> str:
    tail = [line for line in str(check.get("output_tail") or "").splitlines() if line.strip()]
    last = f": {tail[-1].strip()[:200]}" if tail else ""
    code = f" (exit {check['exit_code']})" if check.get("exit_code") is not None else ""
    return f"{check['name']} {check['result']}{code} on attempt {check['attempt']}{last}"


def settle(
    db: Db,
    row: ReviewRow,
    ending: Ending,
    metrics: HiveMetrics,
    accounting: Accounting,
    quota_rest_seconds: int = QUOTA_REST_SECONDS,
) -> None:
    """Settle a review turn, in one transaction. It records the turn's usage and cost at
    the time it was spent, so the day's spend counts it today, whenever the judged work
    ended. With credits on, it sells the turn to the account the order names; a turn
    with no cost known is sold as unpriced. After a provider's refusal it rests the key,
    as a bee's ending would."""
    usage = ending.usage
    cost = accounting.cost(usage)
    with connection(db) as conn, conn.transaction():
        # a turn that reported no usage is a row too: it counts, as unpriced
        turn = spend.turn_spend(
            spend.REVIEW, row.issue, row.conversation_id, row.key_index, usage, cost
        )
        spend.add(conn, turn)
        credits.sell_order_turn(
            conn,
            row.issue,
            row.conversation_id,
            cost.usd if cost else None,
            credits.review_turn(row.conversation_id),
        )
    if cost is not None:
        metrics.spend(row.key_index, cost.usd)
    if ending.refusal is None:
        return
    code = code_of(refusal_outcome(sort_refusal(ending.refusal)) or REFUSED_OUTCOME)
    if not moves_rest(code):
        return
    with connection(db) as conn, conn.transaction():
        rest = keyrests.after_ending(
            conn,
            row.issue,
            row.conversation_id,
            KeyEnding(code, ending.resets_at, quota_rest_seconds),
        )
    log.info("the reviewer's key rests: %s", rest, extra={"issue": row.issue})


def how_it_ended(done: Review, judged: int, criteria: int) -> str:
    """One line on how a review turn that gave no verdict ended."""
    ending = done.ending
    how = [ending.outcome.value]
    if ending.exit_code is not None:
        how.append(f"exit {ending.exit_code}")
    if ending.signal is not None:
        how.append(f"signal {ending.signal}")
    if ending.refusal:
        how.append(f"refusal {ending.refusal}")
    if ending.stop_reason:
        how.append(ending.stop_reason)
    how.append(f"judged {judged} of {criteria} criteria")
    said = f": {done.last_error}" if done.last_error else ""
    return ", ".join(how) + said
