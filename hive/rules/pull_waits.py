"""How long a pull request may wait, and which merge of it is the hive's (issue 27).
Pure: the times and shas come in as arguments.

- A publish job parked on one pull request (checks still running, CI silent, a required
  check that never reports, a review, a draft) looks again every recheck, but not for
  ever: once it has waited `HIVE_GITHUB_PARK_MINUTES` on the same accepted head, the
  work is escalated to a person with a sentence (`park_move`). The wait is counted from
  the job's first park on that head, so a look again does not start it anew.
- A pull request a person merged is the hive's merge only when it was merged at the
  head the reviewer accepted (`merge_is_ours`). Merged at another head (someone pushed
  to the branch and merged it), its merge holds work nobody reviewed: the hive does not
  take it as the issue's merge, closes nothing, and escalates with a sentence
  (`foreign_merge_sentence`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PARK_MINUTES_DEFAULT = 60.0
MIN_LOOK_SECONDS = 1  # a wait's wake time is whole seconds, at least one


@dataclass(frozen=True)
class ParkMove:
    """Park again and look within `wake_in_seconds`, or escalate with `sentence`."""

    escalate: bool
    wake_in_seconds: int = 0
    sentence: str = ""


def park_move(
    waited_seconds: float, bound_seconds: float, recheck_seconds: int, pr: int, why: str
) -> ParkMove:
    """The move of a job that has waited `waited_seconds` on pull request `pr` for `why`
    (the park's own sentence): look again after `recheck_seconds`, or sooner when the
    bound comes first; past the bound, escalate."""
    left = bound_seconds - waited_seconds
    if left <= 0:
        return ParkMove(True, sentence=parked_too_long(pr, why, waited_seconds, bound_seconds))
    wake = max(MIN_LOOK_SECONDS, min(recheck_seconds, math.ceil(left)))
    return ParkMove(False, wake_in_seconds=wake)


def parked_too_long(pr: int, why: str, waited_seconds: float, bound_seconds: float) -> str:
    """The escalation's sentence: what it waited for, how long, and what a person does."""
    return (
        f"pull request #{pr} waited {_duration(waited_seconds)}, past its bound of "
        f"{_duration(bound_seconds)} (HIVE_GITHUB_PARK_MINUTES), without moving: {why}. "
        "A person sees to it on GitHub (the check that never reports, the review or the "
        "rule that holds it); the hive stops looking"
    )


def merge_is_ours(merged_head: str, accepted_head: str) -> bool:
    """Whether a merged pull request's head is the one the reviewer accepted."""
    return bool(merged_head) and merged_head == accepted_head


def foreign_merge_sentence(pr: int, merge_sha: str, merged_head: str, accepted_head: str) -> str:
    """The escalation's sentence for a pull request merged at a head nobody accepted."""
    head = merged_head[:12] or "an unknown head"
    return (
        f"pull request #{pr} was merged by a person as {merge_sha[:12] or 'an unknown commit'}"
        f" at {head}, not at the head the reviewer accepted ({accepted_head[:12]}): the "
        "hive does not take that merge as this issue's work and closes nothing. A person "
        "closes the issue if the merge is enough, or reopens the work"
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"
