"""The night watch (DESIGN 10): what the Queen says on GitHub, each thing once.

Each comment is one of a kind per issue (`hive.rules.forge.Note`), kept in
`hive.forge_note` with the text it says: said again with the same text it sends nothing,
with another text it edits the comment; it is never repeated. A pass (`run_once`)
comments on the open issues that cannot be shaped (no boundary, no criteria) and on
escalated work; the publish job tells it of merges and of checks red on the base
(`merged`, `base_red`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from hive.forge.github.api import Repository
from hive.forge.github.client import GitHubError
from hive.rules.forge import CheckFact, Note, note_action, note_body
from hive.rules.states import ESCALATE
from hive.store import forge, issues
from hive.store.db import Db
from hive.store.issues import Issue

log = logging.getLogger("hive.forge")

UNSHAPED_TEXT = (
    "The hive cannot take this issue as it is: {reason}. Edit the issue and it is read again."
)
ESCALATED_TEXT = "The hive's reviewer escalated this work to a person: {note}"
MERGED_TEXT = "Merged as {sha} (pull request #{pr}). Closing this issue."
BASE_RED_TITLE = "Check {name} is red on {base}"
BASE_RED_TEXT = (
    "The check `{name}` fails on `{base}`, so work built on it inherits the red "
    "(it was seen on pull request #{pr}, where it is not the work's fault).\n\n{summary}"
)


def subject(issue: int) -> str:
    return f"issue:{issue}"


@dataclass(frozen=True)
class WatchPass:
    said: int = 0

    def __bool__(self) -> bool:
        return self.said > 0

    def __str__(self) -> str:
        return f"night watch: {self.said} comments made or edited"


class Watch:
    """`shape(issue)` is the shape rule's reason against the base (None: it is work),
    the Queen's own judgement; without it only missing sections are said."""

    def __init__(
        self,
        db: Db,
        repo: Repository,
        label: str,
        shape: Callable[[Issue], str | None] | None = None,
    ) -> None:
        self.db = db
        self.repo = repo
        self.label = label
        self.shape = shape

    def say(self, issue: int, kind: Note, text: str) -> bool:
        """Make the comment of `kind` on `issue` say `text`: created once, edited when
        the text changes, nothing sent otherwise. True when something was sent."""
        body = note_body(kind, text)
        known = forge.note(self.db, subject(issue), kind.value)
        action = note_action(None if known is None else known.body, body)
        if action == "none":
            return False
        if known is not None and action == "edit":
            self.repo.edit_comment(known.remote_id, body)
            forge.put_note(self.db, subject(issue), kind.value, known.remote_id, body)
        else:
            comment = self.repo.comment(issue, body)
            forge.put_note(self.db, subject(issue), kind.value, comment, body)
        log.info("said %s on #%d", kind.value, issue, extra={"issue": issue})
        return True

    def unshaped(self, issue: int, reason: str) -> bool:
        return self.say(issue, Note.UNSHAPED, UNSHAPED_TEXT.format(reason=reason.rstrip(".")))

    def merged(self, issue: int, sha: str, pr: int) -> None:
        """Comment the merge and close the issue (both once)."""
        self.say(issue, Note.MERGED, MERGED_TEXT.format(sha=sha, pr=pr))
        self.repo.close_issue(issue)  # closing a closed issue changes nothing

    def base_red(self, check: CheckFact, base: str, pr: int) -> int:
        """The issue about `check` red on `base`: opened once while it stays red; its
        number."""
        key = f"check:{check.name}"
        known = forge.note(self.db, key, Note.BASE_RED.value)
        if known is not None:
            return known.remote_id
        text = BASE_RED_TEXT.format(name=check.name, base=base, pr=pr, summary=check.summary)
        body = note_body(Note.BASE_RED, text)
        number = self.repo.open_issue(BASE_RED_TITLE.format(name=check.name, base=base), body, [])
        forge.put_note(self.db, key, Note.BASE_RED.value, number, body)
        log.info("opened #%d: check %s red on %s", number, check.name, base)
        return number

    def run_once(self) -> WatchPass:
        said = 0
        for issue in issues.listing(self.db, open_only=True):
            if self.label not in issue.labels:
                continue
            missing = []
            if not issue.boundary:
                missing.append("no ## Boundary section listing the files it may change")
            elif self.shape is not None:
                problem = self.shape(issue)
                if problem is not None:
                    missing.append(problem)
            if not issue.criteria:
                missing.append("no ## Criteria section saying when it is done")
            try:
                if missing:
                    said += self.unshaped(issue.number, " and ".join(missing))
            except GitHubError as err:
                log.warning("night watch on #%d: %s", issue.number, err)
        for fact in forge.watch_facts(self.db):
            if fact.order_state != ESCALATE:
                continue
            note = fact.review_note or "no note"
            try:
                said += self.say(fact.issue, Note.ESCALATED, ESCALATED_TEXT.format(note=note))
            except GitHubError as err:
                log.warning("night watch on #%d: %s", fact.issue, err)
        return WatchPass(said)
