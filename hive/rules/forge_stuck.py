"""A pull request that will not merge (DESIGN 10): which case it is in, and what the
Queen does in each. Pure: facts come in as arguments."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Stuck(StrEnum):
    """Why a pull request does not merge: exactly one of ten cases, or NONE (it may
    merge). Each case has the Queen's move in NEXT_MOVE."""

    NONE = "none"
    COMPUTING = "computing"  # GitHub has not worked out mergeability yet
    CONFLICT = "conflict"
    BEHIND = "behind base"
    REVIEW = "required review"
    PROTECTED = "branch protection"
    DRAFT = "draft"
    STALE = "stale head"
    HEAD_GONE = "head branch deleted"
    CLOSED = "closed"
    MERGED = "merged by a person"


# what the Queen does with each case: the job parks and looks again (PARKS), sends the
# work back to the bee (SENDS_BACK), pushes the accepted head again (PUSHES_AGAIN), or
# takes the merge as done (TAKES_MERGE)
PARKS = frozenset({Stuck.COMPUTING, Stuck.REVIEW, Stuck.PROTECTED, Stuck.DRAFT})
SENDS_BACK = frozenset({Stuck.CONFLICT, Stuck.BEHIND})
PUSHES_AGAIN = frozenset({Stuck.STALE, Stuck.HEAD_GONE, Stuck.CLOSED})
TAKES_MERGE = frozenset({Stuck.MERGED})

NEXT_MOVE = {
    Stuck.COMPUTING: "GitHub is still working out whether it merges: the Queen looks again "
    "in a few seconds",
    Stuck.CONFLICT: "it conflicts with the base: the Queen sends the work back to the bee "
    "to merge the base in",
    Stuck.BEHIND: "the base's protection wants the branch up to date: the Queen sends the "
    "work back to build on the new base",
    Stuck.REVIEW: "it needs an approving review on GitHub: the Queen merges it once a "
    "reviewer approves",
    Stuck.PROTECTED: "branch protection holds it (a required check or rule): the Queen "
    "merges it once GitHub allows",
    Stuck.DRAFT: "a person made it a draft: the Queen merges it once it is marked ready for review",
    Stuck.STALE: "its head moved since the checks were read: the Queen pushes the "
    "accepted head again and reads its checks again",
    Stuck.HEAD_GONE: "its head branch was deleted: the Queen pushes the accepted head "
    "again and opens a new pull request",
    Stuck.CLOSED: "someone closed it: the Queen opens a new pull request with the accepted head",
    Stuck.MERGED: "a person merged it: the Queen takes that merge as the work's and "
    "closes the issue",
}


@dataclass(frozen=True)
class PullFacts:
    """A pull request as GitHub answers it (`head_sha` empty when its branch is gone)."""

    state: str
    merged: bool
    head_sha: str
    mergeable: bool | None
    mergeable_state: str | None


def stuck_of_pull(pr: PullFacts, accepted_head: str) -> Stuck:
    """The one case of a pull request whose accepted head is `accepted_head`: merged
    first, then a closed or headless one, a moved head, then what mergeability says."""
    if pr.merged:
        return Stuck.MERGED
    if not pr.head_sha:
        return Stuck.HEAD_GONE
    if pr.state != "open":
        return Stuck.CLOSED
    if pr.head_sha != accepted_head:
        return Stuck.STALE
    return stuck_of_state(pr.mergeable, pr.mergeable_state)


def stuck_of_state(mergeable: bool | None, mergeable_state: str | None) -> Stuck:
    """The case of an open pull request from its `mergeable` and `mergeable_state`."""
    if mergeable_state == "draft":
        return Stuck.DRAFT
    if mergeable_state == "dirty" or mergeable is False:
        return Stuck.CONFLICT
    if mergeable is None or mergeable_state in (None, "unknown"):
        return Stuck.COMPUTING
    if mergeable_state == "behind":
        return Stuck.BEHIND
    # clean, unstable, has_hooks; and blocked, which is a required review or a protection
    # rule alike (and an admin's token may merge it): the merge's refusal says which
    return Stuck.NONE


def stuck_of_refusal(status: int, message: str) -> Stuck:
    """The case of a merge GitHub refused (405, 409) from its status and message."""
    text = message.lower()
    if status == 409 or "head branch was modified" in text:
        return Stuck.STALE
    if "base branch was modified" in text:  # a push landed as it merged: look again
        return Stuck.COMPUTING
    if "draft" in text:
        return Stuck.DRAFT
    if "review" in text:
        return Stuck.REVIEW
    if "status check" in text or "protected branch" in text or "rule" in text:
        return Stuck.PROTECTED
    if "up to date" in text or "behind" in text:
        return Stuck.BEHIND
    return Stuck.CONFLICT


def stuck_sentence(pr: int, stuck: Stuck) -> str:
    """The Queen's report line for a pull request in case `stuck`."""
    return f"pull request #{pr} will not merge ({stuck.value}): {NEXT_MOVE[stuck]}"
