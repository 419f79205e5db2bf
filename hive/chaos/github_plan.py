"""The seeded part of `hive chaos --loop --forge github` (pure): what happens to which
issue's pull request, and when GitHub's API misbehaves.

Each issue's pull request gets at most one event (`PullEvent`), a few issues each:

- PERSON_MERGES: a person merges it on GitHub while its checks run (at the accepted head:
  the hive takes that merge as its own).
- PERSON_CLOSES: a person closes it (the hive opens a new one with the accepted head).
- HEAD_DELETED: a person deletes its branch (GitHub closes it; the hive pushes again).
- FOREIGN_MERGE: a person pushes a commit of their own onto the branch and merges it (the
  hive escalates: nobody reviewed that head).
- NEVER_REPORTS: branch protection requires a check that never reports (the hive
  escalates once its park outlives HIVE_GITHUB_PARK_MINUTES).
- NEVER_FINISHES: its check runs for ever (the same bound).
- RED_ONCE: its first check is red (the work is sent back, then merged).

The API's faults fall over the fault window (`ApiFault`): a burst of 5xx answers, a
secondary rate limit with `retry-after`, an answer held past the client's timeout (the
request itself done), and an issue edited twice whose webhooks come newest first, then
the older, then the newest again (twice, out of order).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass


class PullEvent(enum.Enum):
    PERSON_MERGES = "merged by a person"
    PERSON_CLOSES = "closed by a person"
    HEAD_DELETED = "head branch deleted"
    FOREIGN_MERGE = "merged by a person at another head"
    NEVER_REPORTS = "a required check never reports"
    NEVER_FINISHES = "a check never finishes"
    RED_ONCE = "a check red once"


# the events whose pull request a person acts on while its check is held running
HELD = frozenset({PullEvent.PERSON_MERGES, PullEvent.PERSON_CLOSES, PullEvent.HEAD_DELETED,
                  PullEvent.FOREIGN_MERGE})  # fmt: skip
# the events that end with the work escalated to a person, not merged by the hive
ESCALATES = frozenset({PullEvent.FOREIGN_MERGE, PullEvent.NEVER_REPORTS, PullEvent.NEVER_FINISHES})


class ApiKind(enum.Enum):
    SERVER_ERRORS = "5xx answers"
    SECONDARY_LIMIT = "secondary rate limit"
    TIMEOUT = "an answer past the timeout"
    WEBHOOKS = "webhooks twice and out of order"


@dataclass(frozen=True)
class ApiFault:
    at_seconds: float
    kind: ApiKind
    issue: int  # WEBHOOKS: the issue edited; else 0


@dataclass(frozen=True)
class GitHubPlan:
    events: dict[int, PullEvent]  # issue -> its pull request's event
    faults: tuple[ApiFault, ...]


def make_github_plan(
    issues: Sequence[int], seed: int, fault_seconds: float, per_event: int, per_fault: int
) -> GitHubPlan:
    """`per_event` issues get each pull request event (fewer when there are not enough
    issues: each issue one event at most); `per_fault` of each API fault fall over
    `fault_seconds`, in a shuffled order at even steps."""
    rng = random.Random(f"github-{seed}")
    pool = list(issues)
    rng.shuffle(pool)
    events: dict[int, PullEvent] = {}
    for event in PullEvent:
        for _ in range(per_event):
            if pool:
                events[pool.pop()] = event
    kinds = [kind for kind in ApiKind for _ in range(per_fault)]
    rng.shuffle(kinds)
    step = fault_seconds / (len(kinds) + 1) if kinds else 0.0
    faults = []
    for k, kind in enumerate(kinds, start=1):
        edited = rng.choice(list(issues)) if kind == ApiKind.WEBHOOKS and issues else 0
        faults.append(ApiFault(round(k * step, 2), kind, edited))
    return GitHubPlan(events, tuple(faults))


def ci_answer(event: PullEvent | None, first: bool) -> tuple[str | None, str]:
    """The chaos CI's check `ci` on a new head of an issue with `event` (`first`: its
    first head): (conclusion, summary); conclusion None is still running."""
    if (event in HELD and first) or event == PullEvent.NEVER_FINISHES:
        return None, ""
    if event == PullEvent.RED_ONCE and first:
        return "failure", "chaos: red once"
    return "success", "chaos: green"
