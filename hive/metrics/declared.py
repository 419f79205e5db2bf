"""`HiveMetrics`: the counters, gauges and histograms the actors move, declared here.

Built once per process by the tree (or by a test) and handed to the actors. The registry
also carries the process and Python collectors (`process_*`, `python_info`,
`python_gc_*`) and `hive_build_info`, and never exports a `_created` series: a counter's
creation time is a series per counter that no dashboard reads.

Queue depth, orders in flight and the oldest queued order's age are not counted by any
actor: they are read from the store at scrape time (`watch_queue`), so every replica
reports the same truth and a restart loses nothing. The board's open event streams are
read from its hub at scrape time too (`watch_board`), and the credit tokens granted, sold
and burned from the ledger (`watch_credits`: whoever moved them, a `hive credit grant`
included; every replica reports the same sums, so aggregate with max(), not sum()).

The GitHub client counts its requests, retries and the rate limit left on a small
`GitHubMetrics` (`HiveMetrics.github()`); a client built without one counts nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

from hive.metrics.github import (
    GITHUB_METHODS,
    GITHUB_RETRY_REASONS,
    GITHUB_STATUSES,
    GitHubMetrics,
)
from hive.metrics.registry import BUILD_LIBRARIES, HiveRegistry, build_labels
from hive.metrics.scraped import CreditCollector, LastValue, QueueCollector, QueueNumbers
from hive.rules.chat_turn import Step as ChatTurnStep
from hive.rules.outcome_codes import OutcomeCode, code_of
from hive.rules.review_failures import REASONS as REVIEW_FAILURE_REASONS

# A claim normally lands within milliseconds of the NOTIFY, or within one poll
# (HIVE_RUNNER_SECONDS, 15 s) when the hint is lost; a long queue pushes it to minutes.
CLAIM_BUCKETS_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 300)
# A turn runs from seconds (an agent that gives up) to TURN_MAX_SECONDS (3600) and a little
# past it while it is stopped; the last finite bucket is two hours.
TURN_BUCKETS_SECONDS = (1, 5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200)
# A bundle is a few KiB for a one-line fix and up to HIVE_BUNDLE_MAX_BYTES (100 MiB).
BUNDLE_BUCKETS_BYTES = tuple(float(1024 * 4**n) for n in range(10))  # 1 KiB .. 256 MiB

# An issue merges within minutes (the demo) to days (a person approves).
MERGE_BUCKETS_SECONDS = (10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400, 259200)
# Closed label sets, exported at zero from the start so a rate() over them never begins
# with a missing series.
REAPERS = ("boot", "stall", "two_hour", "refused")
# what retention removes (hive.rules.retention)
PRUNED = (
    "transcript_lines",
    "history_rows",
    "bundles",
    "reports",
    "check_runs",
    "jobs",
    "effects",
    "waits",
    "worktrees",
    "branches",
)
CHAT_KINDS = ("answer", "move", "chain")  # hive.rules.chat.Kind, lower case
VERDICTS = ("accept", "sendback", "escalate", "wait", "empty")
# a check run's results (hive.agents.checks.CheckResult; a test keeps them equal)
CHECK_RESULTS = ("pass", "fail", "timeout", "error")


class HiveMetrics:
    """The hive's metrics on a registry of their own. Increment them from the actors:

    - `claims.inc()`, `claim_seconds.observe(claimed_at - queued_at)` when a claim lands;
    - `bees_running.inc()` / `.dec()` around a turn;
      `bee_seconds.labels(outcome=...).observe(turn seconds)` when it ends;
    - `heartbeats.inc()` per renewal that landed, `heartbeat_lost.inc()` when one renewed
      zero rows;
    - `reaped.labels(reaper="boot"|"stall"|"two_hour"|"refused").inc(n)`;
    - `key_refusals.inc()` when this runner refuses an order's key;
    - `drain_held.set(n)` while draining, `handed_back.inc()` per bee handed back;
    - `bundle_bytes.observe(len(bundle))` per bundle stored;
    - `rounds.inc()` per Queen round, `rounds_stalled.inc()` per abandoned round;
    - `reviews.labels(verdict=...).inc()` per review that answered;
      `review_failures.labels(reason=...).inc()` per review that gave no verdict;
    - `pruned.labels(what=...).inc(n)` per pass of retention that removed something;
    - `illegal_transitions.inc()` per move of an order the state table refused;
    - `checks.labels(check=..., result=...).inc()` per check run; `merges.inc()` and
      `issue_to_merge_seconds.observe(...)` per merge pushed;
    - `spend(key_index, usd)` per ending that landed with a known cost;
    - `board_streams_refused.inc()` per event stream answered 503 at the server's cap;
    - `chat_turns.labels(step=...).inc()` per owed answer of a bee's bot claimed here;
    - the GitHub client's requests, retries and rate limit through `github()`.
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else HiveRegistry()
        r = self.registry
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        GCCollector(registry=r)
        self.build_info = Gauge(
            "hive_build_info",
            "Always 1; the labels name the hive's version, Python's and its libraries'.",
            labelnames=("version", "python", *BUILD_LIBRARIES),
            registry=r,
        )
        self.build_info.labels(**build_labels()).set(1)
        self.claims = Counter("hive_claims_total", "Orders claimed by this runner.", registry=r)
        self.claim_seconds = Histogram(
            "hive_claim_seconds",
            "Time from an order's queued_at to its claim by a runner, in seconds.",
            unit="seconds",
            buckets=CLAIM_BUCKETS_SECONDS,
            registry=r,
        )
        self.bees_running = Gauge(
            "hive_bees_running", "Bees (agent turns) running in this process now.", registry=r
        )
        self.sandbox_info = Gauge(
            "hive_sandbox_info",
            "1 for the sandbox this process's turns run in (bwrap+seccomp, landlock or off).",
            ["kind"],
            registry=r,
        )
        self.bee_seconds = Histogram(
            "hive_bee_seconds",
            "Duration of a bee's turn from its start to its end, in seconds, by outcome code.",
            labelnames=("outcome",),
            unit="seconds",
            buckets=TURN_BUCKETS_SECONDS,
            registry=r,
        )
        self.heartbeats = Counter(
            "hive_heartbeats_total", "Heartbeats that renewed an order's claim.", registry=r
        )
        self.heartbeat_lost = Counter(
            "hive_heartbeat_lost_total",
            "Heartbeats that found their order gone (reaped or re-dispatched); the turn stops.",
            registry=r,
        )
        self.reaped = Counter(
            "hive_reaped_total",
            "Orders ended or released by a reaper: boot, stall (runner silent) or two_hour.",
            labelnames=("reaper",),
            registry=r,
        )
        self.key_refusals = Counter(
            "hive_key_refusals_total",
            "Orders this runner refused because it has no matching key for their key_index.",
            registry=r,
        )
        self.drain_held = Gauge(
            "hive_drain_held", "Bees the drain holds until they end or the cap.", registry=r
        )
        self.handed_back = Counter(
            "hive_handed_back_total", "Bees handed back at the drain's cap.", registry=r
        )
        self.bundle_bytes = Histogram(
            "hive_bundle_bytes",
            "Size of each bundle stored in queen_bundle, in bytes.",
            unit="bytes",
            buckets=BUNDLE_BUCKETS_BYTES,
            registry=r,
        )
        self.rounds = Counter(
            "hive_rounds_total", "Queen rounds run (reconcile passes).", registry=r
        )
        self.rounds_stalled = Counter(
            "hive_rounds_stalled_total",
            "Queen rounds abandoned past ROUND_MAX_SECONDS (180 s).",
            registry=r,
        )
        self.reviews = Counter(
            "hive_reviews_total",
            "Reviews of finished work, by verdict.",
            labelnames=("verdict",),
            registry=r,
        )
        self.review_failures = Counter(
            "hive_review_failures_total",
            "Reviews that gave no verdict (tried again, then escalated), by reason.",
            labelnames=("reason",),
            registry=r,
        )
        self.illegal_transitions = Counter(
            "hive_illegal_transitions_total",
            "Moves of an order that the state table (RULES 4) refused.",
            registry=r,
        )
        self.checks = Counter(
            "hive_checks_total",
            "Checks run on merge results, by check and result.",
            labelnames=("check", "result"),
            registry=r,
        )
        self.merges = Counter(
            "hive_merges_total", "Accepted work merged and pushed to the base branch.", registry=r
        )
        self.issue_to_merge_seconds = Histogram(
            "hive_issue_to_merge_seconds",
            "Time from an issue's creation to its work merged, in seconds.",
            unit="seconds",
            buckets=MERGE_BUCKETS_SECONDS,
            registry=r,
        )
        self.spend_usd = Counter(
            "hive_spend_usd_total",
            "US dollars the turns this process ended spent (the agent's own figure, else"
            " the price table's), by key_index; a turn whose cost is unknown adds nothing.",
            labelnames=("key_index",),
            registry=r,
        )
        self.pruned = Counter(
            "hive_pruned_total",
            "Rows, worktrees and branches removed by retention (HIVE_RETENTION_DAYS), by what.",
            labelnames=("what",),
            registry=r,
        )
        self.board_streams = Gauge(
            "hive_board_streams",
            "Board event streams (the board's and issue pages') open in this process now.",
            registry=r,
        )
        self.board_streams_refused = Counter(
            "hive_board_streams_refused_total",
            "Board event streams refused with a 503: the server's cap of open streams was reached.",
            registry=r,
        )
        # the chat (hive.chat): bot messages by hive.rules.chat.Kind, held back by the
        # clocks (each row once), dropped past their bound; a person's message to its answer
        self.chat_messages = Counter(
            "hive_chat_messages_total",
            "Bot messages posted to the chat room, by kind.",
            labelnames=("kind",),
            registry=r,
        )
        self.chat_held = Counter(
            "hive_chat_held_total",
            "Bot messages the chat's clocks held back (each once), by kind.",
            labelnames=("kind",),
            registry=r,
        )
        self.chat_dropped = Counter(
            "hive_chat_dropped_total",
            "Bot messages dropped, unsent: held past their bound or refused, by kind.",
            labelnames=("kind",),
            registry=r,
        )
        self.chat_answer_seconds = Histogram(
            "hive_chat_answer_seconds",
            "Time from a person's message in the chat room to the bot's answer, in seconds.",
            unit="seconds",
            buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 600),
            registry=r,
        )
        self.chat_turns = Counter(
            "hive_chat_turns_total",
            "Owed answers of a bee's bot this process claimed, by what each got: a turn"
            " (run), or a sentence (refuse: the cap or the credit; unknown: no such issue;"
            " cut: restarts cut it too often; rests: every key rests).",
            labelnames=("step",),
            registry=r,
        )
        for kind in CHAT_KINDS:
            for counter in (self.chat_messages, self.chat_held, self.chat_dropped):
                counter.labels(kind=kind)
        for turn_step in ChatTurnStep:
            self.chat_turns.labels(step=turn_step.value)
        self.github_requests = Counter(
            "hive_github_requests_total",
            "Requests sent to GitHub's API, by method and status class (304: not modified,"
            " unreachable: no answer).",
            labelnames=("method", "status"),
            registry=r,
        )
        self.github_retries = Counter(
            "hive_github_retries_total",
            "GitHub requests waited out and sent again, by reason.",
            labelnames=("reason",),
            registry=r,
        )
        self.github_rate_limit_remaining = LastValue(
            "hive_github_rate_limit_remaining",
            "Requests left in GitHub's rate limit, from the last X-RateLimit-Remaining seen;"
            " no sample before the first.",
        )
        r.register(self.github_rate_limit_remaining)
        for reason in GITHUB_RETRY_REASONS.values():
            self.github_retries.labels(reason=reason)
        for what in PRUNED:
            self.pruned.labels(what=what)
        self._credit = CreditCollector()
        r.register(self._credit)
        for reaper in REAPERS:
            self.reaped.labels(reaper=reaper)
        for verdict in VERDICTS:
            self.reviews.labels(verdict=verdict)
        for reason in REVIEW_FAILURE_REASONS:
            self.review_failures.labels(reason=reason)
        for code in OutcomeCode:
            self.bee_seconds.labels(outcome=code.value)
        self._queue: QueueCollector | None = None

    def expect(self, *, checks: Iterable[str] = (), key_indexes: Iterable[int] = ()) -> None:
        """Export at zero the labelled counters whose labels come from the settings (each
        check by every result, the spend of each key and of an order without one), so a
        fresh hive's dashboard shows 0, not "No data". Safe to call again."""
        for check in checks:
            for result in CHECK_RESULTS:
                self.checks.labels(check=check, result=result)
        for label in ("none", *(str(k) for k in key_indexes)):
            self.spend_usd.labels(key_index=label)

    def turn_ended(self, outcome: str, seconds: float) -> None:
        """Count a turn that ended with the order outcome `outcome` after `seconds`."""
        self.bee_seconds.labels(outcome=code_of(outcome).value).observe(seconds)

    def spend(self, key_index: int | None, usd: float) -> None:
        """Count `usd` spent on key `key_index` (an order without a key: label "none")."""
        label = "none" if key_index is None else str(key_index)
        self.spend_usd.labels(key_index=label).inc(max(0.0, usd))

    def watch_credits(self, read: Callable[[], Mapping[str, int]]) -> None:
        """Report the credit tokens granted, sold and burned from `read` (the ledger's
        sums by kind: grant, sale, burn), called once per scrape; before this, or when
        `read` raises, each kind reads 0 (logged)."""
        self._credit.read = read

    def watch_queue(self, read: Callable[[], QueueNumbers]) -> None:
        """Report queue depth, in-flight orders and the oldest queued age from `read`,
        called once per scrape. A `read` that raises leaves those three without a sample
        for that scrape (and logs why); the scrape itself still answers. Call once."""
        if self._queue is not None:
            raise RuntimeError("watch_queue was already called on these metrics")
        self._queue = QueueCollector(read)
        self.registry.register(self._queue)

    def watch_board(self, read: Callable[[], int]) -> None:
        """Report the board's open event streams from `read` (the hub's `streams`), called
        once per scrape; it must be quick and never raise. Before this, the gauge is 0."""
        self.board_streams.set_function(read)

    def github(self) -> GitHubMetrics:
        """What a GitHub client counts on these metrics; every method and status pair is
        exported at zero from here on."""
        for method in GITHUB_METHODS:
            for status in GITHUB_STATUSES:
                self.github_requests.labels(method=method, status=status)
        return GitHubMetrics(
            self.github_requests, self.github_retries, self.github_rate_limit_remaining
        )
