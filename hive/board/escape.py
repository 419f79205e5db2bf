"""Every text from the store goes into the board's HTML through `text()`."""

from __future__ import annotations

import html

from hive.rules.text import shown


def text(value: object, allowed: frozenset[str] = frozenset()) -> str:
    """`value` as HTML text: escaped, control characters not in `allowed` written as
    escapes."""
    return html.escape(shown(str(value), allowed), quote=True)
