"""The transcript: capped lines, a capped turn, held until begin, closed at the end."""

from __future__ import annotations

import threading

from hive.agents.transcript import (
    HIVE,
    LINE_MAX_BYTES,
    REDACT_MIN_CHARS,
    REDACTED,
    STDOUT,
    TRANSCRIPT_MAX_BYTES,
    Transcript,
    cap_line,
)

from .conftest import Recorder


def begun_transcript(recorder: Recorder) -> Transcript:
    begun = threading.Event()
    begun.set()
    return Transcript(recorder, begun, issue=7)


def test_cap_line_cuts_on_utf8_bytes_and_marks_the_cut() -> None:
    assert cap_line("short") == "short"
    assert cap_line("é" * LINE_MAX_BYTES) == "é" * (LINE_MAX_BYTES // 2) + " [cut]"


def test_the_turns_lines_stop_at_the_cap_and_the_drop_is_reported() -> None:
    recorder = Recorder()
    transcript = begun_transcript(recorder)
    line = "z" * 1000
    fits = TRANSCRIPT_MAX_BYTES // len(line)
    for _ in range(fits + 5):
        transcript.line(STDOUT, line)
    transcript.note("the hive's notes still get through")
    transcript.close()
    transcript.line(STDOUT, "after the end")
    assert recorder.texts(STDOUT) == [line] * fits
    assert recorder.texts(HIVE) == [
        f"transcript cap of {TRANSCRIPT_MAX_BYTES} bytes reached",
        "the hive's notes still get through",
        "5 lines past the cap were not kept",
    ]


def test_the_turns_key_never_reaches_the_transcript() -> None:
    recorder = Recorder()
    begun = threading.Event()
    begun.set()
    transcript = Transcript(recorder, begun, issue=7, secret="sk-ant-0123456789")
    transcript.line(STDOUT, "HIVE_KEY=sk-ant-0123456789 and again sk-ant-0123456789")
    assert recorder.texts(STDOUT) == [f"HIVE_KEY={REDACTED} and again {REDACTED}"]


def test_a_value_too_short_to_be_a_key_is_left_alone() -> None:
    recorder = Recorder()
    begun = threading.Event()
    begun.set()
    transcript = Transcript(recorder, begun, issue=7, secret="x" * (REDACT_MIN_CHARS - 1))
    transcript.line(STDOUT, "xxxxxxx marks the spot")
    assert recorder.texts(STDOUT) == ["xxxxxxx marks the spot"]
