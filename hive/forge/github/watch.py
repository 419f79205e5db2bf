"""The night watch (DESIGN 10): what the Queen says on GitHub, each thing once.

Each comment is one of a kind per issue (`hive.rules.forge_notes.Note`), kept in
`hive.forge_note` with the text it says: said again with the same text it sends nothing,
with another text it edits the comment; it is never repeated. A pass (`run_once`)
comments on the open issues that cannot be shaped (no boundary, no criteria) and on
escalated work, says the shaper's word on an issue (its proposal and how to accept it:
the label `hive:shape-ok` applies it, here), and, where the merge is a push
(HIVE_PUBLISH=push), comments each merge on its issue and closes it. The publish job
tells it of the merges of pull requests and of the checks it sees on the base
(`merged`, `base_red`, `base_green`): an issue opened about a check red on the base is
closed once that check passes again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hive.forge.github.api import Repository
from hive.forge.github.client import GitHubError
from hive.rules.credits import may_order, no_credit_sentence
from hive.rules.deliveries import github_may_follow
from hive.rules.forge_checks import CheckFact, base_red_closes
from hive.rules.forge_notes import MARKER, Note, NoteAction, note_action, note_body
from hive.rules.shaping import ACCEPT_LABEL
from hive.rules.states import ESCALATE
from hive.services import shaping
from hive.store import forge, issues, shapes
from hive.store.db import Db
from hive.store.issues import Issue

log = logging.getLogger("hive.forge")

UNSHAPED_TEXT = (
    "The hive cannot take this issue as it is: {reason}. Edit the issue and it is read again."
)
ESCALATED_TEXT = "The hive's reviewer escalated this work to a person: {note}"
NO_CREDIT_TEXT = "The hive gives this issue {sentence}."
CREDIT_BACK_TEXT = "The account {account} holds credit again: this issue goes on."
SHAPE_TEXT = "The hive's shaper: {note}"
MERGED_TEXT = "Merged as {sha}{via}. Closing this issue."
MERGED_VIA = " (pull request #{pr})"
BASE_RED_TITLE = "Check {name} is red on {base}"
BASE_RED_TEXT = (
    "The check `{name}` fails on `{base}`, so work built on it inherits the red "
    "(it was seen on pull request #{pr}, where it is not the work's fault).\n\n{summary}"
)
BASE_GREEN_TEXT = "The check `{name}` passes on `{base}` again ({how}). Closing this issue."
SEEN_ON_BASE = "seen on pull request #{pr}"
MERGED_PASSING = "it passed on pull request #{pr}, merged as {sha}"
MERGES_PER_PASS = 20  # a pass closes this many merged issues at most (a backlog drains)
CHECK_SUBJECT = "check:"


def subject(issue: int) -> str:
    """The subject of the notes on GitHub issue `issue`."""
    return f"issue:{issue}"


def check_subject(name: str) -> str:
    """The subject of the note of the issue opened about check `name` red on the base."""
    return CHECK_SUBJECT + name


@dataclass(frozen=True)
class WatchPass:
    said: int = 0
    closed: int = 0

    def __bool__(self) -> bool:
        return self.said > 0 or self.closed > 0

    def __str__(self) -> str:
        return (
            f"night watch: {self.said} comments made or edited, {self.closed} merged issues closed"
        )


class Watch:
    """`shape(issue)` is the shape rule's reason against the base (None: it is work),
    the Queen's own judgement; without it only missing sections are said.
    `closes_pushed_merges`: the merges are pushes (HIVE_PUBLISH=push), which tell GitHub
    nothing, so each pass closes their issues; a pull request's merge is closed by the
    publish job itself."""

    def __init__(
        self,
        db: Db,
        repo: Repository,
        label: str,
        shape: Callable[[Issue], str | None] | None = None,
        *,
        closes_pushed_merges: bool = False,
        credit: Callable[[Issue], tuple[str, int]] | None = None,
    ) -> None:
        self.db = db
        self.repo = repo
        self.label = label
        self.shape = shape
        self.closes_pushed_merges = closes_pushed_merges
        # HIVE_CREDITS=on: the issue's paying account and its balance
        self.credit = credit

    def say(self, issue: int, kind: Note, text: str) -> bool:
        """Make the comment of `kind` on `issue` say `text`: created once, edited when
        the text changes, nothing sent otherwise. True when something was sent."""
        body = note_body(kind, text)
        known = forge.note(self.db, subject(issue), kind.value)
        if known is None:
            known = self._made_unheard(issue, kind)
        action = note_action(None if known is None else known.body, body)
        if action is NoteAction.NONE:
            return False
        if known is not None and action is NoteAction.EDIT:
            self.repo.edit_comment(known.remote_id, body)
            forge.put_note(self.db, subject(issue), kind.value, known.remote_id, body)
        else:
            comment = self.repo.comment(issue, body)
            forge.put_note(self.db, subject(issue), kind.value, comment, body)
        log.info("said %s on #%d", kind.value, issue, extra={"issue": issue})
        return True

    def _made_unheard(self, issue: int, kind: Note) -> forge.NoteRow | None:
        """The comment of `kind` already on the issue though no note of it was kept (its
        answer was lost: a timeout, a process killed before the note), kept now; None
        when there is none. Found by its hidden marker."""
        marker = MARKER.format(kind=kind.value)
        for comment_id, body in self.repo.comments(issue):
            if body.rstrip().endswith(marker):
                forge.put_note(self.db, subject(issue), kind.value, comment_id, body)
                log.info("found the %s comment on #%d", kind.value, issue, extra={"issue": issue})
                return forge.NoteRow(comment_id, body)
        return None

    def _githubs(self, issue: int) -> bool:
        """Whether GitHub's issue `issue` is the hive's issue of that number."""
        row = issues.get(self.db, issue)
        return row is None or github_may_follow(row.origin)

    def unshaped(self, issue: int, reason: str) -> bool:
        return self.say(issue, Note.UNSHAPED, UNSHAPED_TEXT.format(reason=reason.rstrip(".")))

    def credit_said(self, issue: Issue) -> bool:
        """Say that the issue's account holds no token, once; when it holds some again
        after that, edit the comment to say so. Whether something was sent."""
        assert self.credit is not None
        account, balance = self.credit(issue)
        if not may_order(balance):
            text = NO_CREDIT_TEXT.format(sentence=no_credit_sentence(account, balance))
            return self.say(issue.number, Note.NO_CREDIT, text)
        if forge.note(self.db, subject(issue.number), Note.NO_CREDIT.value) is None:
            return False
        return self.say(issue.number, Note.NO_CREDIT, CREDIT_BACK_TEXT.format(account=account))

    def shaped(self, issue: Issue) -> bool:
        """Say the shaper's word on `issue`; a pending proposal whose issue carries the
        label `hive:shape-ok` is applied first (GitHub's body edited with it). Whether
        something was sent."""
        shape = shapes.get(self.db, issue.number)
        if shape is None or shape.state == shapes.WAITING:
            return False
        if shape.state == shapes.PENDING and ACCEPT_LABEL in issue.labels:
            how = f"the label {ACCEPT_LABEL} on GitHub"
            shaping.accept(self.db, issue.number, how, self.repo.edit_issue_body)
            shape = shapes.get(self.db, issue.number) or shape
        return self.say(issue.number, Note.SHAPE, SHAPE_TEXT.format(note=shape.note))

    def merged(self, issue: int, sha: str, pr: int | None = None) -> None:
        """Comment the merge (of pull request `pr`, or a push) and close the issue, both
        once; the close is recorded last, so a pass tries again whatever failed."""
        if not self._githubs(issue):
            return  # the hive's own issue: GitHub's of that number is another
        via = "" if pr is None else MERGED_VIA.format(pr=pr)
        self.say(issue, Note.MERGED, MERGED_TEXT.format(sha=sha, via=via))
        self.repo.close_issue(issue)  # closing a closed issue changes nothing
        forge.put_note(self.db, subject(issue), Note.CLOSED.value, issue, sha)

    def pushed_merge(self, issue: int, sha: str) -> bool:
        """A push's merge (HIVE_PUBLISH=push): comment it and close the issue unless a
        person (or an earlier version of the hive) closed it already, then it is only
        recorded. Whether it commented."""
        if self.repo.issue(issue).get("state") == "closed":
            forge.put_note(self.db, subject(issue), Note.CLOSED.value, issue, sha)
            return False
        self.merged(issue, sha)
        return True

    def base_red(self, check: CheckFact, base: str, pr: int) -> int:
        """The issue about `check` red on `base`: opened once while it stays red; its
        number."""
        key = check_subject(check.name)
        known = forge.note(self.db, key, Note.BASE_RED.value)
        if known is not None:
            return known.remote_id
        text = BASE_RED_TEXT.format(name=check.name, base=base, pr=pr, summary=check.summary)
        body = note_body(Note.BASE_RED, text)
        number = self.repo.open_issue(BASE_RED_TITLE.format(name=check.name, base=base), body, [])
        forge.put_note(self.db, key, Note.BASE_RED.value, number, body)
        log.info("opened #%d: check %s red on %s", number, check.name, base)
        return number

    def base_green(
        self, seen: Iterable[CheckFact], base: str, pr: int, merged_as: str | None = None
    ) -> list[tuple[str, int]]:
        """Close each issue opened about a check red on `base` that `seen` shows passing:
        the base's checks read for pull request `pr`, or the checks of `pr` merged as
        `merged_as`. Commented once, closed, its note dropped last, so a GitHub error
        leaves it to the next sighting. The (check, issue) pairs closed."""
        if merged_as is None:
            how = SEEN_ON_BASE.format(pr=pr)
        else:
            how = MERGED_PASSING.format(pr=pr, sha=merged_as)
        reds = {
            key.removeprefix(CHECK_SUBJECT): row.remote_id
            for key, row in forge.notes_of_kind(self.db, Note.BASE_RED.value).items()
            if key.startswith(CHECK_SUBJECT)
        }
        closed = []
        for name in base_red_closes(reds, seen):
            number = reds[name]
            text = BASE_GREEN_TEXT.format(name=name, base=base, how=how)
            try:
                self.say(number, Note.BASE_GREEN, text)
                self.repo.close_issue(number)
            except GitHubError as err:
                log.warning("closing #%d (check %s green on %s): %s", number, name, base, err)
                continue
            forge.drop_note(self.db, check_subject(name), Note.BASE_RED.value)
            log.info("closed #%d: check %s is green on %s again", number, name, base)
            closed.append((name, number))
        return closed

    def run_once(self) -> WatchPass:
        said = closed = 0
        for issue in issues.listing(self.db, open_only=True):
            if self.label not in issue.labels or not github_may_follow(issue.origin):
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
                elif self.credit is not None:
                    said += self.credit_said(issue)
                said += self.shaped(issue)
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
        if self.closes_pushed_merges:
            for merge in forge.merged_unclosed(
                self.db, self.label, Note.CLOSED.value, MERGES_PER_PASS
            ):
                try:
                    closed += self.pushed_merge(merge.issue, merge.sha)
                except GitHubError as err:
                    log.warning("night watch on #%d: %s", merge.issue, err)
        return WatchPass(said, closed)
