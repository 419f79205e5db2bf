"""The refusals a use case raises; each carries its HTTP status and its exit code."""

from __future__ import annotations

from hive.errors import HiveError


class ServiceError(HiveError):
    """A use case refused; `str()` is the one line either face shows."""

    status = 500
    exit_code = 1


class BadRequest(ServiceError):
    """The request itself is wrong: fix it and ask again."""

    status = 400
    exit_code = 2


class NotFound(ServiceError):
    """Nothing is known of what the request names."""

    status = 404
    exit_code = 3


class Conflict(ServiceError):
    """What the request names is known, but not in a state that allows it."""

    status = 409
    exit_code = 4
