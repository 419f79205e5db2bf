"""rules/text: which characters a stored text may hold and how one is shown (issue 14)."""

from hypothesis import given
from hypothesis import strategies as st

from hive.rules.text import LINE_BREAKS, first_control, is_control, named, shown

# what a terminal, a log reader or a browser would act on rather than show
STEERING = [
    "\x00",  # NUL: PostgreSQL refuses it
    "\x07",  # BEL
    "\x1b",  # ESC: starts a terminal escape
    "\r",  # CR: rewrites the line
    "\n",
    "\t",
    "\x7f",  # DEL
    "\x85",  # NEL, a C1 line break
    "\x9b",  # CSI, a C1 escape
    "\u202a",
    "\u202e",  # the right-to-left override
    "\u2066",
    "\u2069",
    "\u2028",  # the line separator: a one-line title would show as two
    "\u2029",  # the paragraph separator
    "\ud800",  # a lone surrogate (JSON's "\ud800")
    "\udfff",
]
# what a person writes: accents, scripts, emoji and the joiners they need, a BOM, a
# zero-width space (shown as nothing, but steering nothing)
PLAIN = ["a", " ", "é", "ключ", "中", "👍", "👩\u200d💻", "\u200c", "\u200b", "\ufeff", "~"]


def test_every_steering_character_is_a_control():
    assert [c for c in STEERING if not is_control(c)] == []


def test_what_a_person_writes_is_not_a_control():
    assert [c for c in PLAIN if first_control(c) is not None] == []


def test_the_first_control_not_allowed_is_named():
    assert first_control("a\nb\x1bc", LINE_BREAKS) == "\x1b"
    assert first_control("a\nb\tc", LINE_BREAKS) is None
    assert named("\u2028") == "U+2028" and named("\x1b") == "U+001B"


def test_a_text_is_shown_with_its_controls_escaped():
    assert shown("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert shown("r\u202e1") == "r\\u202e1"
    assert shown("one\u2028two") == "one\\u2028two"
    assert shown("a\nb", LINE_BREAKS) == "a\nb"
    assert shown("plain é 👍") == "plain é 👍"


@given(st.text() | st.lists(st.sampled_from(STEERING + PLAIN)).map("".join))
def test_a_shown_text_holds_no_control(text):
    assert first_control(shown(text)) is None
    assert shown(text, LINE_BREAKS).replace("\n", "").replace("\t", "") == shown(
        text.replace("\n", "").replace("\t", "")
    )
