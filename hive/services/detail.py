"""One issue, all of it (`GET /api/issues/<n>`): its fields, its order (the state's name,
attempt, review, send-backs, approval, merge), its latest checks and its live publish
job."""

from __future__ import annotations

from typing import Any

from hive.rules.jobs import JobKind
from hive.services.orders import plain
from hive.services.standing import standing, state_name, unknown
from hive.store import issues, jobs, people, publish, spend
from hive.store.db import Db

CHECKS_SHOWN = 20  # the latest check runs shown with an issue


def issue(db: Db, number: int) -> dict[str, Any]:
    """The issue `number` as a JSON-ready dict; UnknownIssue when there is none."""
    row = issues.get(db, number)
    f = people.facts(db, number)
    if row is None or f is None:
        raise unknown(number)
    order = None
    if f.order_state is not None:
        order = {
            "state": state_name(f.order_state),
            "stands": standing(f),
            "attempt": f.attempt,
            "detail": f.detail,
            "runner": f.claimed_by,
            "queued_at": f.queued_at,
            "dispatched_at": f.dispatched_at,
            "finished_at": f.finished_at,
            "outcome": f.outcome,
            "review_state": f.review_state,
            "review_note": f.review_note,
            "reviewed_at": f.reviewed_at,
            "sendbacks": f.sendbacks,
            "approved_at": f.approved_at,
            "approved_by": f.approved_by,
            "merged_sha": f.merged_sha,
            "merged_at": f.merged_at,
        }
    spent = spend.of_issue(db, number)
    job = jobs.live(db, JobKind.PUBLISH, number)
    shown: dict[str, Any] = plain(
        {
            "number": row.number,
            "title": row.title,
            "body": row.body,
            "state": row.state,
            "labels": row.labels,
            "boundary": row.boundary,
            "criteria": row.criteria,
            "blocked_by": row.blocked_by,
            "closed_reason": f.closed_reason,
            "closed_at": f.closed_at,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
            "order": order,
            # every ended attempt of the issue (the archived ones too)
            "spend": {
                "attempts": spent.attempts,
                "cost_usd": round(spent.cost_usd, 6),
                "unpriced": spent.unpriced,
                "input_tokens": spent.input_tokens,
                "output_tokens": spent.output_tokens,
            },
            "checks": publish.checks_of(db, number, limit=CHECKS_SHOWN),
            "job": None
            if job is None
            else {
                "id": job.id,
                "kind": job.kind,
                "attempt": job.attempt,
                "step": job.step,
                "state": str(job.state),
                "detail": job.detail,
                "updated_at": job.updated_at,
            },
        }
    )
    return shown
