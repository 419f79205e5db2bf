"""`hive.logs`: a text line or one JSON object a line on stderr, naming the component and
the issue; the supervisors' reports keep their structured fields in JSON."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hive import logs
from supervisors import Restart, Supervisor
from tests.unit.supervisors.helpers import Journal, worker

JSON_AT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
TEXT_LINE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<level>\w+) +(?P<where>[^:]+): (?P<message>.*)$"
)
# what every LogRecord has; anything else on a record came in through `extra=`
_PLAIN_RECORD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message"}


class Records(logging.Handler):
    """Keeps every record the root logger passes on, beside the handler under test."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def log_a_failure(logger: str, message: str, *, issue: int) -> None:
    """`logger.exception(message)` while a ValueError("boom") is being handled."""
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger(logger).exception(message, extra={"issue": issue})


@pytest.fixture
def log_setup(
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[..., Callable[[], list[str]]]]:
    """`log_setup(format, level)` runs `logs.setup` and returns a reader of the stderr
    lines written since; the root logger's handlers and level are put back afterwards."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)

    def setup(log_format: str = "text", level: str = "info") -> Callable[[], list[str]]:
        logs.setup(log_format, level)
        capsys.readouterr()
        return lambda: capsys.readouterr().err.splitlines()

    yield setup
    root.handlers[:], level = saved
    root.setLevel(level)


def test_json_line_names_component_below_hive_and_the_issue(log_setup: Any) -> None:
    read = log_setup("json")
    logging.getLogger("hive.bee").info("turn started", extra={"issue": 7})
    [line] = read()
    record = json.loads(line)
    assert JSON_AT.match(record.pop("at")), line
    assert record == {"level": "info", "component": "bee", "message": "turn started", "issue": 7}


def test_json_line_without_an_issue_has_no_issue_field(log_setup: Any) -> None:
    read = log_setup("json")
    logging.getLogger("hive.http").warning("store unreachable")
    [line] = read()
    record = json.loads(line)
    assert "issue" not in record
    assert (record["level"], record["component"]) == ("warning", "http")


def test_json_message_with_newlines_stays_one_line(log_setup: Any) -> None:
    read = log_setup("json")
    logging.getLogger("hive.queen").info("first\nsecond", extra={"issue": 2})
    [line] = read()
    assert json.loads(line)["message"] == "first\nsecond"


def test_json_line_carries_the_exception_as_error(log_setup: Any) -> None:
    read = log_setup("json")
    log_a_failure("hive.ending", "ending failed", issue=4)
    [line] = read()
    record = json.loads(line)
    assert (record["level"], record["issue"], record["message"]) == ("error", 4, "ending failed")
    assert record["error"].startswith("Traceback")
    assert record["error"].endswith("ValueError: boom")


def test_text_line_names_component_and_issue(log_setup: Any) -> None:
    read = log_setup("text")
    logging.getLogger("hive.queen").info("round: dispatched 1", extra={"issue": 3})
    [line] = read()
    match = TEXT_LINE.match(line)
    assert match, line
    assert match.group("level", "where", "message") == ("info", "queen #3", "round: dispatched 1")


def test_text_line_without_an_issue_names_the_component_alone(log_setup: Any) -> None:
    read = log_setup("text")
    logging.getLogger("hive.reaper").warning("reaped 2")
    [line] = read()
    match = TEXT_LINE.match(line)
    assert match, line
    assert match.group("level", "where") == ("warning", "reaper")


def test_text_line_carries_the_traceback_after_it(log_setup: Any) -> None:
    read = log_setup("text")
    log_a_failure("hive.bee", "turn failed", issue=5)
    first, *rest = read()
    match = TEXT_LINE.match(first)
    assert match, first
    assert match.group("level", "where") == ("error", "bee #5")
    assert rest[0] == "Traceback (most recent call last):"
    assert rest[-1] == "ValueError: boom"


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize(("level", "shown"), [("debug", 2), ("info", 1), ("warning", 0)])
def test_records_below_the_level_are_dropped(
    log_setup: Any, log_format: str, level: str, shown: int
) -> None:
    read = log_setup(log_format, level)
    log = logging.getLogger("hive.runner")
    log.debug("claim poll")
    log.info("claimed #1")
    assert len(read()) == shown


def test_supervisors_reports_keep_every_structured_field_in_json(log_setup: Any) -> None:
    read = log_setup("json")
    kept = Records()
    logging.getLogger().addHandler(kept)
    journal = Journal()
    tree = Supervisor("app", [worker("w1", journal, Restart.TRANSIENT)]).start()
    tree.stop()
    lines = [json.loads(line) for line in read()]
    reports = [line for line in lines if line["component"] == "supervisors"]
    assert [r["event"] for r in reports] == [
        "child_started",
        "shutdown_step",
        "supervisor_stopped",
    ]
    started, step, stopped = reports
    assert started | {"at": None} == {
        "at": None,
        "level": "info",
        "component": "supervisors",
        "message": "app: started child w1",
        "event": "child_started",
        "supervisor": "app",
        "child": "w1",
        "kind": "worker",
        "restart": "transient",
    }
    assert (step["child"], step["outcome"], step["phase"]) == ("w1", "stopped", "shutdown")
    assert isinstance(step["seconds"], float)
    assert (stopped["normal"], stopped["reason"]) == (True, "shutdown")
    # whatever a record carries in `extra=` (but None) reaches its JSON line
    for record, line in zip(kept.records, lines, strict=True):
        extras = {k for k, v in record.__dict__.items() if k not in _PLAIN_RECORD and v is not None}
        assert extras <= set(line), (extras - set(line), line)
