"""What a person acts with on the board (DESIGN 11): a card's buttons, the filters and
the header's figures. The buttons post to the API's routes through the page's script,
which sends the page's CSRF token and shows the answer in `#answer`."""

from __future__ import annotations

from hive.board.escape import text
from hive.rules.board import COLUMNS, Action, Column, actions_of
from hive.services.judgement import NOTE_MAX_CHARS
from hive.services.pulse import THROUGHPUT_HOURS, Pulse

BUTTON_TEXT = {
    Action.APPROVE: "approve",
    Action.REJECT: "send back",
    Action.CANCEL: "cancel the order",
    Action.CLOSE: "close",
    Action.REOPEN: "reopen",
}


def actions(number: int, offered: Column | tuple[Action, ...]) -> str:
    """The buttons for issue `number`: those a card in a column offers, or `offered`
    (none: an empty string)."""
    if isinstance(offered, Column):
        offered = actions_of(offered)
    if not offered:
        return ""
    parts = []
    for act in offered:
        button = (
            f'<button type="button" data-act="{act}" data-issue="{number}">'
            f"{BUTTON_TEXT[act]}</button>"
        )
        if act is Action.REJECT:
            button = (
                f'<details class="reject"><summary>reject…</summary>'
                f'<label>note for the next attempt <textarea data-note rows="2" '
                f'maxlength="{NOTE_MAX_CHARS}" required></textarea></label>{button}</details>'
            )
        parts.append(button)
    return f'<div class="acts" aria-label="Act on #{number}">{"".join(parts)}</div>'


def filters(*, public: bool) -> str:
    """The filter form: a title search and a column, and (for a holder of the token) a
    label and a runner. The page's script applies them and keeps them in the URL."""
    options = "".join(f'<option value="{c.value}">{c.value}</option>' for c in COLUMNS)
    fields = [
        '<label>search <input type="search" name="q" autocomplete="off"></label>',
        f'<label>column <select name="column"><option value="">all</option>{options}'
        "</select></label>",
    ]
    if not public:
        fields.append('<label>label <input name="label" autocomplete="off"></label>')
        fields.append('<label>runner <input name="runner" autocomplete="off"></label>')
    return (
        '<form id="filters" class="filters" role="search" aria-label="Filter the cards">'
        f"{''.join(fields)}</form>"
    )


def pulse(p: Pulse) -> str:
    """The header's figures as one line of text."""
    unpriced = f" ({p.unpriced} unpriced)" if p.unpriced else ""
    runners = ", ".join(
        f"{text(r.name)} {r.running}/{r.slots} slot{'s' if r.slots != 1 else ''}"
        f"{' draining' if r.draining else ''}"
        for r in p.runners
    )
    return (
        f'<span data-pulse="throughput">{p.merged_per_hour:.1f} merged/h '
        f"({p.merged} in {THROUGHPUT_HOURS} h)</span> · "
        f'<span data-pulse="spend">${p.spend_today_usd:.2f} spent today{unpriced}</span> · '
        f'<span data-pulse="runners">runners: {runners or "none seen"}</span> · '
        f'<span data-pulse="keys">keys resting: {p.keys_resting} of {p.keys}</span>'
    )
