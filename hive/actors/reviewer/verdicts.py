"""What a verdict leads to, told by the reviewer (tree.py wires it): accepted work becomes
a publish job, and the Queen rounds at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hive.actors.messages import JOBS, QUEEN, IssuesChanged, JobsReady
from hive.rules.criteria import Decision
from hive.rules.jobs import JobKind, Step
from hive.rules.modes import PublishMode
from hive.rules.states import ACCEPT
from hive.store import jobs
from hive.store.reviews import ReviewRow


def after_verdict(
    db: Any, mode: PublishMode, tell: Callable[[str, object], object]
) -> Callable[[ReviewRow, Decision], None]:
    """What a verdict leads to: accepted work becomes a publish job (HIVE_PUBLISH=push;
    `off` leaves it for export), and the Queen rounds at once (a send-back is dispatched
    again, an escalation reported)."""

    def done(row: ReviewRow, decision: Decision) -> None:
        if decision.verdict == ACCEPT and mode in (PublishMode.PUSH, PublishMode.GITHUB):
            made = jobs.create(
                db, JobKind.PUBLISH, row.issue, Step.CHECKS, attempt=row.attempt, detail="accepted"
            )
            if made.created:
                tell(JOBS, JobsReady())
        tell(QUEEN, IssuesChanged())

    return done
