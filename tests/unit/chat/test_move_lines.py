"""Each move the Queen posts is one line, and its cause names it (one post per move)."""

from datetime import UTC, datetime

from hive.chat.moves import NOTE_MAX_CHARS, line_of

AT = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)


def row(**fields):
    base = {"move": "", "issue": 7, "key_index": None, "attempt": 2, "detail": None}
    return base | {"until": None, "at": AT} | fields


def test_an_escalation_says_a_person_decides_and_quotes_the_note_in_one_line():
    move = line_of(row(move="escalate", detail="two send-backs;\nstill red\x1b[31m"))
    assert (
        move.line
        == "#7 escalated: a person decides (attempt 2): two send-backs; still red\\x1b[31m"
    )
    assert move.cause == f"move:escalate:7:2:{AT.isoformat()}" and move.issue == 7


def test_a_send_back_without_a_note_ends_its_sentence():
    assert line_of(row(move="sendback")).line == "#7 sent back (attempt 2)."


def test_a_long_note_is_cut():
    line = line_of(row(move="sendback", detail="x" * 1000)).line
    assert line.endswith("…") and len(line) < NOTE_MAX_CHARS + 40


def test_a_merge_names_its_commit_and_a_rest_its_key_and_end():
    assert line_of(row(move="merged", detail="c" * 40)).line == "#7 merged as cccccccccccc."
    rest = line_of(row(move="rest", issue=None, key_index=2, until=AT, detail=None))
    assert rest.line == "Key 2 rests until 09:30Z (refused)." and rest.issue is None
    assert rest.cause == f"move:rest:2:{AT.isoformat()}"
