"""Logging set-up: text or one JSON object per line (`HIVE_LOG_FORMAT`), each record with
its component (the logger name below `hive.`) and, where known, the issue number
(pass `extra={"issue": n}`)."""

from __future__ import annotations

import json
import logging
import sys
import time

# structured fields that records may carry (`extra=`): the issue, and every field of the
# supervisors' reports (supervisors/reports.py and the Reporter.emit calls). Named, not
# "whatever extra holds", so a field reaches the log only when someone chose to put it there.
_EXTRA_FIELDS = (
    "issue",
    "event",
    "supervisor",
    "child",
    "reason",
    "outcome",
    "seconds",
    "phase",
    "normal",
    "kind",
    "restart",
)


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "component": record.name.removeprefix("hive."),
            "message": record.getMessage(),
        }
        for name in _EXTRA_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        issue = getattr(record, "issue", None)
        where = record.name.removeprefix("hive.") + (f" #{issue}" if issue is not None else "")
        level = record.levelname.lower()
        text = f"{self.formatTime(record)} {level:<7} {where}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def setup(log_format: str = "text", level: str = "info") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonFormatter() if log_format == "json" else _TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
