"""What the GitHub client (`hive.forge.github.client`) counts: its requests by method and
status class, its retries by reason, and the rate limit left. Made by `HiveMetrics.github()`.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import Counter

from hive.metrics.scraped import LastValue
from hive.rules.forge_limits import Pause

# GitHub's requests by method and status class, never by path or number, so the series
# stay bounded; a process that talks to GitHub exports every pair at zero from the start
GITHUB_METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE", "other")
GITHUB_STATUSES = ("2xx", "304", "3xx", "4xx", "5xx", "unreachable", "other")
# why the client sent a request again (hive.rules.forge_limits.Pause, NONE aside)
GITHUB_RETRY_REASONS = {
    Pause.PRIMARY: "rate_limit",
    Pause.SECONDARY: "secondary_rate_limit",
    Pause.SERVER: "server_error",
}


@dataclass(frozen=True)
class GitHubMetrics:
    """The GitHub client's metrics (`hive.forge.github.client`). Thread-safe."""

    requests: Counter
    retries: Counter
    rate_limit_remaining: LastValue

    def answered(self, method: str, status: int, remaining: float | None) -> None:
        """Count one request by `method` and `status` (0: GitHub could not be reached)
        and keep `remaining`, the X-RateLimit-Remaining of its answer when it had one."""
        self.requests.labels(method=github_method(method), status=github_status(status)).inc()
        if remaining is not None:
            self.rate_limit_remaining.set(remaining)

    def retried(self, why: Pause) -> None:
        """Count one request sent again after a pause for `why` (never Pause.NONE)."""
        self.retries.labels(reason=GITHUB_RETRY_REASONS[why]).inc()


def github_method(method: str) -> str:
    """`method` when it is one of GITHUB_METHODS, else "other"."""
    upper = method.upper()
    return upper if upper in GITHUB_METHODS else "other"


def github_status(status: int) -> str:
    """The status label of GITHUB_STATUSES: a 304 on its own (it costs no rate limit),
    else the class; 0 (no answer) is "unreachable"."""
    if status == 0:
        return "unreachable"
    if status == 304:
        return "304"
    if 200 <= status < 600:
        return f"{status // 100}xx"
    return "other"
