"""Which characters a stored text may hold, and how a text is shown on a terminal.

A title, a label or a criterion comes from anyone who can reach the API; it is stored,
then printed by `hive issue list` or a log line. A control character (ESC starts a
terminal escape, CR rewrites the line, NUL is refused by PostgreSQL) or a bidirectional
override (it reverses what a reader sees) is refused at the door, and anything printed
from the store goes through `shown` as well, for rows written before the door held.
"""

from __future__ import annotations

# the bidirectional embeddings, overrides and isolates: U+202A..U+202E, U+2066..U+2069
_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
# the line and paragraph separators: a reader (a browser's JavaScript, an editor) breaks
# the line there, so a one-line title would show as two
_SEPARATORS = frozenset({0x2028, 0x2029})
LINE_BREAKS = frozenset("\n\t")


def is_control(char: str) -> bool:
    """C0 and C1 control characters, DEL, the bidirectional controls, the line and
    paragraph separators, and a lone surrogate (JSON's "\\ud800" decodes to one; it is no
    UTF-8, so no store takes it)."""
    code = ord(char)
    return (
        code < 32
        or 127 <= code < 160
        or code in _BIDI
        or code in _SEPARATORS
        or 0xD800 <= code <= 0xDFFF
    )


def first_control(text: str, allowed: frozenset[str] = frozenset()) -> str | None:
    """The first control character of `text` not in `allowed`, or None."""
    return next((c for c in text if is_control(c) and c not in allowed), None)


def named(char: str) -> str:
    """A control character as a message names it: U+001B."""
    return f"U+{ord(char):04X}"


def shown(text: str, allowed: frozenset[str] = frozenset()) -> str:
    """`text` with every control character not in `allowed` written as an escape
    (`\\x1b`, `\\u202e`), so printing it cannot steer a terminal."""
    if first_control(text, allowed) is None:
        return text
    return "".join(c if not is_control(c) or c in allowed else repr(c)[1:-1] for c in text)
