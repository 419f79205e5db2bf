"""What happened to an issue, for a person: `why` (the Queen's sentences about it, newest
first) and `transcript` (what its turns said, in order, and as they say it).

`why` gathers the round reports' lines that name `#N`, each attempt's dispatch, ending
and verdict with its note, an approval and a merge, the publish job's step and sentence,
the checks that did not pass, and the issue's close. A round repeats its sentence each
round while nothing changes: consecutive repeats become one line with their count.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hive.rules.modes import CheckResult
from hive.rules.states import RUNNING
from hive.services.standing import unknown
from hive.store import people, publish, shapes
from hive.store.db import Db
from hive.store.people import TranscriptLine

WHY_LINES = 30  # `hive why` shows this many sentences unless asked for more
WHY_LINE_MAX_CHARS = 300  # one line each: a long note is cut, the API has it whole
REPORT_DAYS = 30  # round reports older than this are not searched
REPORT_ROWS_MAX = 500  # at most this many reports naming the issue are read
FOLLOW_POLL_SECONDS = 0.5

_VERDICTS = {
    "accept": "accepted",
    "sendback": "sent back",
    "escalate": "escalated: a person decides",
    "wait": "the reviewer will look again",
    "empty": "no work to judge",
    "stale": "stale: dispatched again",
    "released": "released after its floor",
}


@dataclass(frozen=True)
class Sentence:
    at: datetime
    text: str


def why(db: Db, issue: int, limit: int = WHY_LINES) -> list[Sentence]:
    """Up to `limit` sentences about `issue`, newest first; UnknownIssue for an unknown
    number."""
    f = people.facts(db, issue)
    if f is None:
        raise unknown(issue)
    found: list[Sentence] = []
    if f.closed_at is not None:
        found.append(Sentence(f.closed_at, f"closed: {f.closed_reason}"))
    for row in people.attempts(db, issue):
        found += _attempt_sentences(row)
    for job in people.jobs_of(db, issue):
        said = f": {job.detail}" if job.detail else ""
        found.append(
            Sentence(job.updated_at, f"{job.kind} job {job.id} {job.state} at {job.step}{said}")
        )
    for check in publish.checks_of(db, issue):
        if check["result"] != CheckResult.PASS:
            found.append(Sentence(check["at"], _check_sentence(check)))
    shape = shapes.get(db, issue)
    if shape is not None and shape.updated_at is not None:
        found.append(Sentence(shape.updated_at, f"shaper ({shape.state}): {shape.note}"))
    found += _report_sentences(db, issue)
    found.sort(key=lambda s: s.at, reverse=True)
    return [Sentence(s.at, _one_line(s.text)) for s in found[:limit]]


def _attempt_sentences(row: Mapping[str, Any]) -> list[Sentence]:
    k = row.get("attempt")
    said: list[Sentence] = []

    def add(at: Any, text: str) -> None:
        if at:
            said.append(Sentence(datetime.fromisoformat(at), f"attempt {k} {text}"))

    queued = " (queued for a runner)" if row.get("queued_at") else ""
    add(row.get("created_at"), f"dispatched{queued}")
    if row.get("finished_at"):
        detail = f": {row['detail']}" if row.get("detail") else ""
        add(row["finished_at"], f"ended {row.get('outcome')}{detail}")
    verdict = row.get("review_state")
    if verdict and row.get("reviewed_at"):
        note = f": {row['review_note']}" if row.get("review_note") else ""
        add(row["reviewed_at"], f"{_VERDICTS.get(verdict, verdict)}{note}")
    if row.get("approved_at"):
        add(row["approved_at"], f"approved by {row.get('approved_by')}")
    if row.get("merged_at"):
        add(row["merged_at"], f"merged as {row.get('merged_sha')}")
    return said


def _check_sentence(check: Mapping[str, Any]) -> str:
    on = f" on {str(check['merge_sha'])[:12]}" if check.get("merge_sha") else ""
    code = f" (exit {check['exit_code']})" if check.get("exit_code") is not None else ""
    tail = [line for line in str(check.get("output_tail") or "").splitlines() if line.strip()]
    last = f": {tail[-1].strip()}" if tail else ""
    return f"check {check['name']} {check['result']}{on}{code}, attempt {check['attempt']}{last}"


def _report_sentences(db: Db, issue: int) -> list[Sentence]:
    """The report lines that name #issue, consecutive repeats folded into one."""
    names = re.compile(rf"#{issue}(?![0-9])")
    lines: list[Sentence] = []
    for report in people.reports_naming(db, issue, days=REPORT_DAYS, limit=REPORT_ROWS_MAX):
        for text in [report.headline, *report.body.splitlines()]:
            if names.search(text):
                lines.append(Sentence(report.at, f"round: {text.strip()}"))
    lines.sort(key=lambda s: s.at)
    folded: list[Sentence] = []
    first: datetime | None = None
    count = 0
    for i, line in enumerate(lines):
        if count == 0:
            first = line.at
        count += 1
        if i + 1 < len(lines) and lines[i + 1].text == line.text:
            continue
        if count > 1 and first is not None:
            since = first.strftime("%Y-%m-%d %H:%M:%SZ")
            folded.append(Sentence(line.at, f"{line.text} (x{count} since {since})"))
        else:
            folded.append(line)
        count = 0
    return folded


def _one_line(text: str) -> str:
    flat = " | ".join(part.strip() for part in text.splitlines() if part.strip())
    if len(flat) > WHY_LINE_MAX_CHARS:
        return flat[: WHY_LINE_MAX_CHARS - 3] + "..."
    return flat


# ---- the transcript ----------------------------------------------------------------------


@dataclass(frozen=True)
class LogLine:
    attempt: int | None  # None: an attempt no row remembers
    line: TranscriptLine


def transcript(
    db: Db,
    issue: int,
    *,
    follow: bool = False,
    poll_seconds: float = FOLLOW_POLL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[LogLine]:
    """The issue's transcript, oldest first. With `follow`, and while the attempt in
    flight when it was asked is still in flight, it keeps yielding new lines as they come
    (a poll every `poll_seconds`), then the last ones, and ends. UnknownIssue for an
    unknown number."""
    f = people.facts(db, issue)
    if f is None:
        raise unknown(issue)
    watched = f.conversation_id if follow and f.order_state == RUNNING else None
    attempts = _attempt_numbers(db, issue)
    seen: dict[uuid.UUID, int] = {}
    while True:
        page = people.transcript_after(db, issue, seen)
        for line in page:
            seen[line.conversation_id] = line.seq
            if line.conversation_id not in attempts:
                attempts = _attempt_numbers(db, issue)
            yield LogLine(attempts.get(line.conversation_id), line)
        if len(page) >= people.TRANSCRIPT_PAGE_LINES:
            continue
        if watched is None:
            return
        now = people.facts(db, issue)
        if now is None or now.conversation_id != watched or now.order_state != RUNNING:
            watched = None  # it ended: one more read takes its last lines, then stop
            continue
        sleep(poll_seconds)


def in_flight(db: Db, issue: int) -> bool:
    """Whether `issue` has an order in flight (what `--follow` follows)."""
    f = people.facts(db, issue)
    return f is not None and f.order_state == RUNNING


def _attempt_numbers(db: Db, issue: int) -> dict[uuid.UUID, int]:
    return {
        uuid.UUID(str(row["conversation_id"])): int(row["attempt"])
        for row in people.attempts(db, issue)
        if row.get("conversation_id") and row.get("attempt") is not None
    }
