"""The chaos run's invariants, each a pure function from what the run left to a `Check`
(what was measured, and every violation in one line), and the table they print as.

- `ended_once`: every order ended exactly once with the code FINISHED, and that is its last
  attempt (reviews are the demo reviewer's; an issue without criteria is escalated,
  so a finished order is never dispatched again).
- `overlapping_turns`: no two turns of one issue were alive at once, as the agents' own
  log tells it (a turn lives from its `start` to its last line).
- `lost_bundles`: each finished order's bundle is stored, `git bundle verify` accepts it,
  `git fetch` takes it, and its branch holds the work of a turn that ended.
- `outside_boundaries`: no bundle carries a path outside its issue's boundary (a hostile
  agent commits some itself).
- `outliving`: no agent process outlived its runner by more than the bound.
- `sigterm_exits`: every process that got SIGTERM exited 0.
- `sold_once` (credits on): every finished attempt's turn was sold exactly once, no
  sale names a turn that did not end, and the ledger replays to the sums it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hive.chaos.agent import TurnEvent
from hive.rules.outcome_codes import OutcomeCode

# the warden kills a dead runner's groups at once; this much is slack for a loaded machine
OUTLIVE_BOUND_SECONDS = 5.0
_SHOWN = 5  # violations named in the table; the count says how many there were


@dataclass(frozen=True)
class Check:
    name: str
    measured: str
    violations: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.violations


@dataclass(frozen=True)
class BundleCheck:
    issue: int
    stored: bool
    verified: bool  # `git bundle verify`
    fetched: bool  # `git fetch` of its branch
    holds_work: bool  # the branch's file has the line of a turn that logged `end`
    outside: tuple[str, ...] = ()  # paths the branch changed outside its boundary


@dataclass(frozen=True)
class Outliving:
    runner: str
    pids: tuple[int, ...]  # its agents' processes alive when it died
    gone_after_seconds: float | None  # None: still alive when the check gave up


def ended_once(outcomes: Mapping[int, Sequence[OutcomeCode | None]]) -> Check:
    """`outcomes`: each issue's attempts' codes, oldest first (None: not ended)."""
    bad = []
    for issue, seen in sorted(outcomes.items()):
        finished = sum(1 for code in seen if code is OutcomeCode.FINISHED)
        if finished != 1 or not seen or seen[-1] is not OutcomeCode.FINISHED:
            bad.append(f"#{issue}: {finished} finished in {_attempts(seen)}")
    attempts = sum(len(seen) for seen in outcomes.values())
    return Check(
        "every order ended once as finished",
        f"{len(outcomes)} orders, {attempts} attempts",
        tuple(bad),
    )


@dataclass(frozen=True)
class Ledger:
    """The credit ledger as the run left it: its sales' turns, and why its replay does
    not match its sums (None: it does)."""

    sold_turns: tuple[str, ...]
    problem: str | None = None


def sold_once(attempts: Mapping[str, OutcomeCode | None], ledger: Ledger) -> Check:
    """`attempts`: each attempt's code by its conversation id (None: not ended)."""
    bad = []
    sold: dict[str, int] = {}
    reviews = 0
    for turn in ledger.sold_turns:
        kind, _, rest = turn.partition(":")
        if kind == "review":  # each review turn its own sale, of an attempt that ended
            reviews += 1
            conversation = rest.partition(":")[0]
            if attempts.get(conversation, None) is None:
                bad.append(f"{turn} reviewed no ended attempt of the run")
            continue
        sold[turn] = sold.get(turn, 0) + 1
    for conversation, code in sorted(attempts.items()):
        times = sold.pop(f"bee:{conversation}", 0)
        if code is OutcomeCode.FINISHED and times != 1:
            bad.append(f"attempt {conversation} finished and was sold {times} times")
        elif code is None and times:
            bad.append(f"attempt {conversation} was sold before it ended")
        elif times > 1:
            bad.append(f"attempt {conversation} ({code}) was sold {times} times")
    bad += [f"{turn} was sold but is no attempt of the run" for turn in sorted(sold)]
    if ledger.problem is not None:
        bad.append(ledger.problem)
    return Check(
        "every finished turn sold once",
        f"{len(ledger.sold_turns) - reviews} turns and {reviews} reviews sold,"
        f" {len(attempts)} attempts",
        tuple(bad),
    )


def _attempts(seen: Sequence[OutcomeCode | None]) -> str:
    return "[" + ", ".join(code or "not ended" for code in seen) + "]"


def overlapping_turns(events: Sequence[TurnEvent]) -> Check:
    """Two turns of one issue overlap when one starts before the other's last line."""
    spans: dict[tuple[int, str], list[int]] = {}
    for at, event in enumerate(events):
        span = spans.setdefault((event.issue, event.turn), [at, at])
        span[1] = at
    by_issue: dict[int, list[tuple[int, int, str]]] = {}
    for (issue, turn), (first, last) in spans.items():
        by_issue.setdefault(issue, []).append((first, last, turn))
    bad = []
    for issue, turns in sorted(by_issue.items()):
        turns.sort()
        reach, holder = -1, ""
        for first, last, turn in turns:
            if first < reach:
                bad.append(f"#{issue}: {turn} started while {holder} was alive")
            if last > reach:
                reach, holder = last, turn
    return Check("0 overlapping turns of one issue", f"{len(spans)} turns logged", tuple(bad))


def lost_bundles(checks: Sequence[BundleCheck]) -> Check:
    bad = []
    for c in checks:
        missing = [
            what
            for what, fine in (
                ("not stored", c.stored),
                ("git bundle verify failed", c.verified),
                ("git fetch failed", c.fetched),
                ("no ended turn's work on the branch", c.holds_work),
            )
            if not fine
        ]
        if missing:
            bad.append(f"#{c.issue}: {', '.join(missing)}")
    return Check("0 lost bundles", f"{len(checks)} bundles fetched and verified", tuple(bad))


def outside_boundaries(checks: Sequence[BundleCheck]) -> Check:
    bad = [f"#{c.issue}: carries {', '.join(c.outside)}" for c in checks if c.outside]
    return Check(
        "nothing outside a boundary in a bundle",
        f"{len(checks)} bundles' paths compared with their boundaries",
        tuple(bad),
    )


def outliving(records: Sequence[Outliving], bound_seconds: float = OUTLIVE_BOUND_SECONDS) -> Check:
    """A runner's agents must be gone within `bound_seconds` of its death."""
    bad = []
    slowest = 0.0
    for r in records:
        if not r.pids:
            continue
        if r.gone_after_seconds is None or r.gone_after_seconds > bound_seconds:
            after = "never" if r.gone_after_seconds is None else f"{r.gone_after_seconds:.1f} s"
            bad.append(f"{r.runner}: pids {list(r.pids)} gone after {after}")
        else:
            slowest = max(slowest, r.gone_after_seconds)
    agents = sum(len(r.pids) for r in records)
    return Check(
        "no agent outlives its runner",
        f"{agents} agents of {len(records)} dead runners, gone within {slowest:.1f} s",
        tuple(bad),
    )


def sigterm_exits(exits: Sequence[tuple[str, int | None]]) -> Check:
    """`exits`: each process that got SIGTERM and its exit code (None: it did not exit)."""
    bad = [f"{name}: {'no exit' if code is None else f'exit {code}'}" for name, code in exits]
    bad = [line for line, (_, code) in zip(bad, exits, strict=True) if code != 0]
    return Check("every SIGTERM exits 0", f"{len(exits)} processes got SIGTERM", tuple(bad))


def named_issues(checks: Sequence[Check], most: int = _SHOWN) -> list[int]:
    """The issues the violations name first (`#N: ...`), at most `most`, in order: their
    histories are printed with the table."""
    found: list[int] = []
    for c in checks:
        for violation in c.violations:
            head = violation.split(":", 1)[0].split(" ", 1)[0]
            if head.startswith("#") and head[1:].isdigit() and int(head[1:]) not in found:
                found.append(int(head[1:]))
    return found[:most]


def table(checks: Sequence[Check]) -> str:
    """The checks as the run prints them: one row each, then each violation named."""
    width = max(len(c.name) for c in checks)
    lines = [f"{'invariant':<{width}}  {'result':<6}  measured"]
    for c in checks:
        result = "ok" if c.ok else f"FAIL {len(c.violations)}"
        lines.append(f"{c.name:<{width}}  {result:<6}  {c.measured}")
    for c in checks:
        for violation in c.violations[:_SHOWN]:
            lines.append(f"  {c.name}: {violation}")
        if len(c.violations) > _SHOWN:
            lines.append(f"  {c.name}: ... and {len(c.violations) - _SHOWN} more")
    return "\n".join(lines)


def as_json(
    checks: Sequence[Check],
    seed: int,
    seconds: float,
    faults: Sequence[str],
    unasked: Sequence[tuple[str, int, str]],
    histories: Mapping[int, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The run as one JSON object (DESIGN 11): each invariant's `ok` and `measured` (and
    every violation), the seed that replays it, and what happened on the way."""
    return {
        "ok": all(c.ok for c in checks),
        "seed": seed,
        "seconds": round(seconds, 1),
        "invariants": {
            c.name: {"ok": c.ok, "measured": c.measured, "violations": list(c.violations)}
            for c in checks
        },
        "faults": list(faults),
        "exited_by_itself": [
            {"name": name, "exit": code, "last_line": last} for name, code, last in unasked
        ],
        "histories": {str(n): list(lines) for n, lines in (histories or {}).items()},
    }
