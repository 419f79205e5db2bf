"""The GitHub forge's decisions (DESIGN 10): an issue body's sections, what a pull
request's checks say, which case a pull request that will not merge is in, the
night watch's comments, and which git traffic carries the forge's token. Pure: facts
come in as arguments.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

# ---- an issue's body --------------------------------------------------------------

BOUNDARY_HEADINGS = frozenset({"boundary", "files"})
CRITERIA_HEADINGS = frozenset({"criteria", "acceptance criteria", "done when"})
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|[0-9]{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")


@dataclass(frozen=True)
class BodySections:
    """A body's boundary paths and criteria, each in the order written."""

    boundary: tuple[str, ...]
    criteria: tuple[str, ...]


def body_sections(body: str | None) -> BodySections:
    """The list items under a `## Boundary` (or `## Files`) heading and under a
    `## Criteria` (`## Acceptance criteria`, `## Done when`) heading, any heading level,
    any case. A boundary item in backticks loses them; a criterion is kept as written
    (the demo reviewer reads its backticks). Items under other headings are not read."""
    boundary: list[str] = []
    criteria: list[str] = []
    into: list[str] | None = None
    for line in (body or "").replace("\r\n", "\n").split("\n"):
        heading = _HEADING.match(line)
        if heading:
            name = heading.group(1).strip().rstrip(":").lower()
            into = (
                boundary
                if name in BOUNDARY_HEADINGS
                else criteria
                if name in CRITERIA_HEADINGS
                else None
            )
            continue
        item = _ITEM.match(line)
        if into is None or item is None:
            continue
        text = item.group(1)
        if into is boundary:
            text = text.strip("`").strip()
        if text and text not in into:
            into.append(text)
    return BodySections(tuple(boundary), tuple(criteria))


# ---- checks -----------------------------------------------------------------------


class CheckState(StrEnum):
    PENDING = "pending"
    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class CheckFact:
    """One check of a commit: a check run (by name) or a commit status (by context)."""

    name: str
    state: CheckState
    summary: str = ""


# check run conclusions GitHub documents; neutral and skipped do not hold a merge back
PASSING_CONCLUSIONS = frozenset({"success", "neutral", "skipped"})
FAILING_STATUSES = frozenset({"failure", "error"})


def check_run_state(status: str | None, conclusion: str | None) -> CheckState:
    if status != "completed":
        return CheckState.PENDING
    return CheckState.PASS if conclusion in PASSING_CONCLUSIONS else CheckState.FAIL


def status_state(state: str | None) -> CheckState:
    if state == "success":
        return CheckState.PASS
    if state in FAILING_STATUSES:
        return CheckState.FAIL
    return CheckState.PENDING


class Gate(StrEnum):
    """What a pull request's checks say (its head, and its base for a red one)."""

    NONE = "no checks"  # zero checks: they never open the gate
    PENDING = "pending"  # some still run: look again when they end
    GREEN = "green"  # every check passed
    RED = "red"  # a check failed that passes on the base: the work goes back
    INHERITED = "inherited"  # every red check is red on the base too: not the bee's fault


@dataclass(frozen=True)
class GateCase:
    gate: Gate
    red: tuple[CheckFact, ...] = ()  # RED: the bee's; INHERITED: the base's


def gate_case(head: Sequence[CheckFact], base_red: Iterable[str]) -> GateCase:
    """The case of a pull request whose head has the checks `head`, `base_red` the names
    of the checks red on its base. A red check is inherited only when the base says so:
    a check red on the head and green, pending or absent on the base is the bee's."""
    if not head:
        return GateCase(Gate.NONE)
    if any(c.state == CheckState.PENDING for c in head):
        return GateCase(Gate.PENDING)
    red = tuple(c for c in head if c.state == CheckState.FAIL)
    if not red:
        return GateCase(Gate.GREEN)
    on_base = set(base_red)
    own = tuple(c for c in red if c.name not in on_base)
    if own:
        return GateCase(Gate.RED, own)
    return GateCase(Gate.INHERITED, red)


def base_red_closes(open_red: Iterable[str], seen: Iterable[CheckFact]) -> tuple[str, ...]:
    """Which issues about a check red on the base may close: the names of `open_red`
    (the checks with such an issue open) that pass in `seen`, the base's own checks or
    those of work merged into it. A check still red, pending or absent from `seen` says
    nothing about the base: its issue stays open."""
    passing = {c.name for c in seen if c.state == CheckState.PASS}
    return tuple(sorted(name for name in set(open_red) if name in passing))


# ---- a pull request that will not merge -------------------------------------------


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


# ---- the night watch's comments ------------------------------------------------------


class Note(StrEnum):
    """What the Queen keeps on GitHub, one of each kind per subject: the comments on an
    issue (edited, never repeated), and two records that are no comment."""

    UNSHAPED = "unshaped"
    ESCALATED = "escalated"
    NO_CREDIT = "no credit"  # its account holds no token (HIVE_CREDITS=on)
    MERGED = "merged"
    BASE_RED = "base red"  # no comment: the issue opened about a check red on the base
    BASE_GREEN = "base green"  # on that issue, as the check passes again and it closes
    CLOSED = "closed"  # no comment: the merge (its sha) the issue was closed for
    SHAPE = "shape"  # the shaper's word on the issue: its proposal, applied or refused


MARKER = "<!-- hive:{kind} -->"


def note_body(kind: Note, text: str) -> str:
    """The comment's text with its hidden marker (how the watch finds its own comment)."""
    return f"{text}\n\n{MARKER.format(kind=kind.value)}"


def note_action(existing_body: str | None, wanted_body: str) -> str:
    """`create` when there is no comment yet, `edit` when it says something else now,
    `none` when it already says this (the watch never repeats itself)."""
    if existing_body is None:
        return "create"
    return "none" if existing_body == wanted_body else "edit"


_INHERITED = "also red on {base}: not this work's fault\n"


def inherited_tail(base: str, summary: str) -> str:
    """The output kept for a check that is red on `base` too, headed for people as not
    the work's fault (the check's `inherited` column is what the gate reads)."""
    return _INHERITED.format(base=base) + summary


# ---- git traffic to the forge ----------------------------------------------------------

GIT_USER = "x-access-token"  # GitHub takes a token for git as HTTP Basic with this user
_DEFAULT_PORTS = {"https": 443, "http": 80}
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def forge_git_origin(api_url: str) -> tuple[str, str, int]:
    """(scheme, host, port) where the forge of `api_url` serves git: github.com for
    api.github.com, the API's own host and port otherwise (GitHub Enterprise serves
    its API at `https://host/api/v3` and git at `https://host/`)."""
    parts = urlsplit(api_url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host == "api.github.com":
        host = "github.com"
    return scheme, host, parts.port or _DEFAULT_PORTS.get(scheme, 0)


def git_sends_token(url: str, api_url: str) -> bool:
    """Whether git traffic to `url` carries the forge's token: only over https to the
    forge's git origin (`forge_git_origin`), or over http where the forge itself is a
    loopback http address (a test's fake). A URL carrying a user or password of its own
    gets nothing added; a path, another host, port or scheme gets nothing."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    if parts.username is not None or parts.password is not None:
        return False
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return False
    origin = forge_git_origin(api_url)
    if scheme == "http" and not (origin[0] == "http" and origin[1] in _LOOPBACK):
        return False
    host = (parts.hostname or "").lower()
    return (scheme, host, port or _DEFAULT_PORTS[scheme]) == origin
