"""Issues in (DESIGN 10): the GitHub issues carrying `HIVE_GITHUB_LABEL` become the
hive's issues, with the same numbers.

An issue's title, body and labels (the labels carry its priority) are copied; its body's
`## Boundary` and `## Criteria` sections become its boundary and criteria
(`hive.rules.forge_body.body_sections`). Edits, closes, reopens and a removed label are
followed through the same verbs a person's `hive issue edit|close|reopen` uses
(`hive.services.changes`), so changed criteria make judged work stale as they would
there. One issue comes from a webhook's payload (`sync_one`) or from the poll, which
lists the labelled issues with `If-None-Match`: a quiet poll is a 304, no rate limit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from hive.forge.github.api import Repository
from hive.rules.credits import account_problem
from hive.rules.deliveries import forge_time, github_may_follow, is_stale, taken_sentence
from hive.rules.forge_body import body_sections
from hive.rules.issue_states import ClosedCode, IssueState
from hive.services import changes
from hive.services import issues as issue_service
from hive.services.errors import BadRequest
from hive.services.standing import NotNow
from hive.store import issues as issue_rows
from hive.store.db import Db
from hive.store.issues import NewIssue
from hive.store.people import IssueChange

log = logging.getLogger("hive.forge")

UNLABELLED = "unlabelled on GitHub"


class Synced(StrEnum):
    """What one issue's sync did."""

    NEW = "new"
    EDITED = "edited"
    CLOSED = "closed"
    REOPENED = "reopened"
    SAME = "same"
    IGNORED = "ignored"  # not the hive's: a pull request, unlabelled and unknown
    STALE = "stale"  # older than the state the row last followed: nothing changed
    REFUSED = "refused"  # it cannot be the hive's issue as it is (the reason is kept)


@dataclass(frozen=True)
class SyncResult:
    number: int
    did: Synced
    reason: str = ""  # REFUSED: why, one line (the watch comments it once)


def fields_of(data: Mapping[str, Any]) -> NewIssue:
    """The hive's issue a GitHub issue describes (not yet checked)."""
    sections = body_sections(data.get("body"))
    return NewIssue(
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        labels=tuple(str(label.get("name", "")) for label in data.get("labels") or ()),
        boundary=sections.boundary,
        criteria=sections.criteria,
        account=author_account(data),
    )


def author_account(data: Mapping[str, Any]) -> str | None:
    """The credit account of a GitHub issue: its author's login (None: no login that is
    an account name, and the default account pays)."""
    user = data.get("user")
    login = user.get("login") if isinstance(user, Mapping) else None
    if not isinstance(login, str) or account_problem(login) is not None:
        return None
    return login


def sync_one(db: Db, data: Mapping[str, Any], label: str) -> SyncResult:
    """Bring one GitHub issue (a REST or webhook `issue` object) into `queen_issue`. A
    payload older than the state the row last followed, or naming the number of one of
    the hive's own issues, changes nothing (hive/rules/deliveries.py)."""
    number = int(data["number"])
    if data.get("pull_request"):
        return SyncResult(number, Synced.IGNORED)
    wanted = fields_of(data)
    labelled = label in wanted.labels
    remote_open = data.get("state") == "open"
    updated_at = forge_time(data.get("updated_at"))
    local = issue_rows.get(db, number)
    if local is not None and not github_may_follow(local.origin):
        if labelled and remote_open:
            return SyncResult(number, Synced.REFUSED, taken_sentence(number))
        return SyncResult(number, Synced.IGNORED)
    if local is not None and is_stale(local.forge_updated_at, updated_at):
        log.info("issue #%d: a stale delivery, older than the last followed", number)
        return SyncResult(number, Synced.STALE)
    done = _sync(db, number, wanted, labelled, remote_open, local)
    if done.did not in (Synced.IGNORED, Synced.REFUSED) or local is not None:
        issue_rows.follow_forge(db, number, updated_at)
    return done


def _sync(
    db: Db,
    number: int,
    wanted: NewIssue,
    labelled: bool,
    remote_open: bool,
    local: issue_rows.Issue | None,
) -> SyncResult:
    if local is None:
        if not labelled or not remote_open:
            return SyncResult(number, Synced.IGNORED)
        try:
            checked = issue_service.check(wanted)
        except BadRequest as bad:
            return SyncResult(number, Synced.REFUSED, str(bad))
        issue_rows.upsert(db, number, checked)
        log.info("issue #%d came from GitHub", number, extra={"issue": number})
        return SyncResult(number, Synced.NEW)
    if local.state is IssueState.OPEN and (not remote_open or not labelled):
        changes.close(db, number)
        log.info("issue #%d closed on GitHub", number, extra={"issue": number})
        return SyncResult(number, Synced.CLOSED)
    if local.state is IssueState.CLOSED:
        merged = local.closed_code == ClosedCode.MERGED
        if remote_open and labelled and not merged:
            changes.reopen(db, number)
            return SyncResult(number, Synced.REOPENED)
        return SyncResult(number, Synced.SAME)
    return _edit(db, number, local, wanted)


def _edit(db: Db, number: int, local: issue_rows.Issue, wanted: NewIssue) -> SyncResult:
    try:  # compared as it would be stored (duplicates collapsed, paths normalised)
        wanted = issue_service.check(wanted)
    except BadRequest as bad:
        return SyncResult(number, Synced.REFUSED, str(bad))
    change = IssueChange(
        title=wanted.title if wanted.title.strip() != local.title else None,
        body=wanted.body if wanted.body != local.body else None,
        labels=wanted.labels if list(wanted.labels) != local.labels else None,
        boundary=wanted.boundary if list(wanted.boundary) != local.boundary else None,
        criteria=wanted.criteria if list(wanted.criteria) != local.criteria else None,
    )
    if all(getattr(change, f) is None for f in ("title", "body", "labels", "boundary", "criteria")):
        return SyncResult(number, Synced.SAME)
    try:
        changes.edit(db, number, change)
    except NotNow as refused:
        # accepted work keeps its criteria (a person rejects it first); the rest lands
        log.warning("issue #%d: edit on GitHub not followed: %s", number, refused)
        kept = IssueChange(change.title, change.body, change.labels, change.boundary, None)
        if any(getattr(kept, f) is not None for f in ("title", "body", "labels", "boundary")):
            changes.edit(db, number, kept)
        return SyncResult(number, Synced.REFUSED, str(refused))
    except BadRequest as bad:
        return SyncResult(number, Synced.REFUSED, str(bad))
    return SyncResult(number, Synced.EDITED)


@dataclass
class PollResult:
    status: int = 0  # GitHub's answer to the listing (304: nothing changed)
    results: list[SyncResult] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        quiet = (Synced.SAME, Synced.IGNORED, Synced.STALE)
        return any(r.did not in quiet for r in self.results)

    def __bool__(self) -> bool:
        return self.changed

    def __str__(self) -> str:
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.did.value] = counts.get(r.did.value, 0) + 1
        told = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        return f"github poll: {self.status}; {told or 'nothing'}"


class Intake:
    """The poll: the labelled issues, conditional on the last ETag (kept in memory: a
    restarted Queen's first poll costs one request)."""

    def __init__(
        self,
        db: Db,
        repo: Repository,
        label: str,
        on_refused: Callable[[SyncResult], None] = lambda result: None,
    ) -> None:
        self.db = db
        self.repo = repo
        self.label = label
        self.on_refused = on_refused
        self.etag: str | None = None

    def poll(self) -> PollResult:
        answer = self.repo.labelled_issues(self.label, self.etag)
        result = PollResult(answer.status)
        if answer.status == 304:
            return result
        seen: set[int] = set()
        for data in answer.data or ():
            seen.add(int(data["number"]))
            result.results.append(self.sync(data))
        result.results += self._unlisted(seen)
        # kept only once every issue of the listing is synced: a pass cut off midway (the
        # store restarting, the process stopped) reads the whole listing again next time
        self.etag = answer.etag
        return result

    def sync(self, data: Mapping[str, Any]) -> SyncResult:
        done = sync_one(self.db, data, self.label)
        if done.did == Synced.REFUSED:
            self.on_refused(done)
        return done

    def _unlisted(self, seen: set[int]) -> Sequence[SyncResult]:
        """An open issue of ours the labelled listing no longer holds lost its label (or
        was deleted): it is closed here."""
        gone = []
        for issue in issue_rows.listing(self.db, open_only=True):
            if not github_may_follow(issue.origin):
                continue  # the hive's own: GitHub's listing says nothing about it
            if issue.number not in seen and self.label in issue.labels:
                changes.close(self.db, issue.number)
                gone.append(SyncResult(issue.number, Synced.CLOSED, UNLABELLED))
        return gone
