"""An issue's page: where its work stands, its attempts with their verdicts and spend,
its checks, the Queen's sentences about it, the bundle to download and the transcript
(followed live while a turn runs). `summary` is the part the page fetches again when
the issue changes; `lines` is a piece of transcript it appends."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from hive.board import credit
from hive.board.controls import actions
from hive.board.escape import text
from hive.board.render import page, when
from hive.rules.board import ACTIONS
from hive.rules.text import LINE_BREAKS
from hive.services.board import Attempt, IssueView, TranscriptLine

# an attempt's row shows this much of its ending's sentence and its review note
NOTE_MAX_CHARS = 600
OUTPUT_TAIL_LINES = 6  # a check's output shown on the page


def after_text(marks: Mapping[uuid.UUID, int]) -> str:
    """The transcript cursor as the page sends it back: `uuid:seq,uuid:seq`."""
    return ",".join(f"{c}:{s}" for c, s in sorted(marks.items(), key=lambda m: str(m[0])))


def parse_after(raw: str) -> dict[uuid.UUID, int]:
    """The cursor `after_text` wrote; ValueError names what is wrong."""
    seen: dict[uuid.UUID, int] = {}
    for part in filter(None, raw.split(",")):
        conversation, colon, seq = part.partition(":")
        if not colon or not seq.isdigit() or len(seq) > 9:
            raise ValueError("after: not a list of conversation:seq")
        try:
            seen[uuid.UUID(conversation)] = int(seq)
        except ValueError:
            raise ValueError("after: not a list of conversation:seq") from None
    return seen


def issue_page(view: IssueView, now: datetime, csrf: str) -> str:
    """Issue `view`'s page, its buttons sending `csrf`. It offers every action (each
    answers where the issue stands); they stand outside the summary, which the page
    fetches again as the issue changes, so a note being written is never wiped."""
    c = view.card
    body = (
        f'<body data-page="issue" data-issue="{c.number}" data-csrf="{text(csrf)}">'
        '<a class="skip" href="#summary">Skip to the issue</a>'
        '<header><nav aria-label="Back"><a href="/board">← the board</a></nav>'
        '<p id="live" role="status" aria-live="polite">connecting…</p>'
        '<p id="answer" class="answer" role="status" aria-live="polite"></p></header>'
        f'<main class="issue"><section id="act" aria-label="Act on it">'
        f"{actions(c.number, ACTIONS)}</section>"
        f'<section id="summary" aria-label="Where it stands">{summary(view, now)}</section>'
        '<section class="transcript" aria-labelledby="h-transcript">'
        '<h2 id="h-transcript">Transcript</h2>'
        '<p><label><input type="checkbox" id="follow" checked> follow new lines</label></p>'
        f'<ol id="lines" class="lines" data-after="{text(after_text(view.transcript.marks))}" '
        'tabindex="0" aria-label="Transcript lines">'
        f"{lines(view.transcript.lines, view.attempt_of)}</ol></section></main>"
    )
    return page(f"#{c.number} {c.title}", body)


def summary(view: IssueView, now: datetime) -> str:
    c = view.card
    facts = [f'<span class="badge col-{c.column.value}">{c.column.value}</span>']
    facts.append(text(view.stands))
    if c.runner is not None:
        facts.append(f"runner {text(c.runner)}")
    if c.key_index is not None:
        facts.append(f"key {c.key_index}")
    spend = view.spend
    cost = f", ${spend.cost_usd:.2f}" if spend.attempts > spend.unpriced else ""
    if spend.unpriced:
        cost += f" ({spend.unpriced} unpriced)"
    bundle = "<p>No bundle stored.</p>"
    if view.bundle is not None:
        b = view.bundle
        bundle = (
            f'<p><a href="/queen/export/{c.number}" download>Download the bundle</a> '
            f"({b.size} bytes, head {text(b.head_sha[:12])}, {when(b.created_at, now)})</p>"
        )
    return (
        f"<h1>#{c.number} {text(c.title)}</h1>"
        f'<p class="facts">{" · ".join(facts)}</p>'
        f'<p class="last">{text(c.last.text)} {when(c.last.at, now)}</p>'
        f"{_listing('Boundary', view.boundary)}{_listing('Criteria', view.criteria)}"
        f"{_body(view.body)}"
        f"<h2>Spend</h2><p>{spend.input_tokens} tokens in, {spend.output_tokens} out{cost}"
        f" over {len(view.attempts)} attempt{'s' if len(view.attempts) != 1 else ''}</p>"
        f"{credit.issue_section(view.credit)}"
        f"<h2>Bundle</h2>{bundle}"
        f"{_attempts(view.attempts)}{_checks(view.checks, now)}"
        f"<h2>The Queen's sentences</h2>{_sentences(view, now)}"
    )


def lines(found: Sequence[TranscriptLine], attempt_of: Mapping[uuid.UUID, int]) -> str:
    out = []
    for line in found:
        k = attempt_of.get(line.conversation_id)
        label = f"attempt {k}" if k is not None else "attempt ?"
        out.append(
            f'<li class="line kind-{text(line.kind)}"><span class="meta">{label} '
            f'<time datetime="{line.at.isoformat()}">{line.at.strftime("%H:%M:%S")}</time> '
            f'{text(line.kind)}</span> <span class="text">{text(line.text)}</span></li>'
        )
    return "".join(out)


def _listing(title: str, items: Sequence[Any]) -> str:
    if not items:
        return ""
    shown = "".join(f"<li>{text(i)}</li>" for i in items)
    return f"<h2>{title}</h2><ul>{shown}</ul>"


def _body(body: str) -> str:
    # a body keeps its line breaks and tabs (its <pre> shows them as they are)
    return f'<h2>Body</h2><pre class="body">{text(body, LINE_BREAKS)}</pre>' if body.strip() else ""


def _cut(value: str | None) -> str:
    if not value:
        return ""
    return text(value if len(value) <= NOTE_MAX_CHARS else value[: NOTE_MAX_CHARS - 1] + "…")


def _attempts(attempts: Sequence[Attempt]) -> str:
    if not attempts:
        return "<h2>Attempts</h2><p>No attempt yet.</p>"
    rows = "".join(
        f"<tr><th scope=row>{a.attempt}</th><td>{text(a.runner or 'queued')}</td>"
        f"<td>{'' if a.key_index is None else a.key_index}</td>"
        f"<td>{_stamp(a.dispatched_at or a.ordered_at)}</td><td>{_stamp(a.finished_at)}</td>"
        f"<td>{text(a.outcome or 'in flight')}<br><small>{_cut(a.detail)}</small></td>"
        f"<td>{text(a.verdict or '')}<br><small>{_cut(a.review_note)}</small></td>"
        f"<td>{a.input_tokens} / {a.output_tokens}"
        f"{'' if a.cost_usd is None else f'<br>${a.cost_usd:.2f}'}</td></tr>"
        for a in attempts
    )
    return (
        "<h2>Attempts</h2><div class=scroll><table><thead><tr><th scope=col>#</th>"
        "<th scope=col>runner</th><th scope=col>key</th><th scope=col>started</th>"
        "<th scope=col>ended</th><th scope=col>outcome</th><th scope=col>verdict</th>"
        f"<th scope=col>tokens in / out</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _stamp(iso: str | None) -> str:
    if not iso:
        return ""
    return f'<time datetime="{text(iso)}">{text(iso[:19].replace("T", " "))}</time>'


def _checks(checks: Sequence[Mapping[str, Any]], now: datetime) -> str:
    if not checks:
        return "<h2>Checks</h2><p>No check ran yet.</p>"
    rows = []
    for check in checks:
        tail = "\n".join(str(check.get("output_tail") or "").splitlines()[-OUTPUT_TAIL_LINES:])
        rows.append(
            f"<tr><th scope=row>{text(check['name'])}</th>"
            f'<td class="result-{text(check["result"])}">{text(check["result"])}</td>'
            f"<td>{check['attempt']}</td><td>{when(check['at'], now)}</td>"
            f"<td><pre>{text(tail)}</pre></td></tr>"
        )
    return (
        "<h2>Checks</h2><div class=scroll><table><thead><tr><th scope=col>check</th>"
        "<th scope=col>result</th><th scope=col>attempt</th><th scope=col>when</th>"
        f"<th scope=col>output</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _sentences(view: IssueView, now: datetime) -> str:
    if not view.sentences:
        return "<p>Nothing said yet.</p>"
    items = "".join(f"<li>{when(s.at, now)} {text(s.text)}</li>" for s in view.sentences)
    return f'<ol class="sentences">{items}</ol>'
