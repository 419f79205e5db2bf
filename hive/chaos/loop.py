"""`hive chaos --loop`: the run's issues carry a criterion and go on past the bee through
review, a check and publish by push into the upstream repository's main, under the same
faults. A `command:` reviewer follows a seeded plan per issue (`verdicts`): it sends the
work back once, crashes once or hangs past its bound once (no verdict: the review-failure
floor retries it after its pause), fails three times in a row (the floor escalates the
work with a sentence), or accepts; the check is red exactly once in the run. Two
invariants more (pure):

- `merged_once`: every issue is closed by the merge of its work exactly once, or
  escalated with a sentence that needs a person.
- `on_main_once`: the upstream main holds each merged issue's change exactly once: its
  merge is main or an ancestor of it (none lost), its file there holds its turns' work,
  and no turn's line twice (none applied twice).
- `kept_pushes`: main still holds every push a person made meanwhile (its commit an
  ancestor of main, its line in its file): no merge or push of the hive undid one.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hive.chaos.invariants import Check

SEND_BACK = "unmet"
CRASH = "crash"
HANG = "hang"  # past the review's bound (HIVE_REVIEW_MAX_SECONDS): stopped, a failure
ACCEPT = "met"
STICKY = "+"  # a verdict so marked is never used up: every later review gives it too
# failures in a row until HIVE_REVIEW_FAILURES_MAX escalates the work; the last one
# sticks, since a review the drain stops (a Queen's SIGTERM) is no failure and is run again
ESCALATED = (HANG, CRASH, CRASH + STICKY)
ESCALATE_EVERY = 20  # one issue in this many fails its reviews until escalated

REVIEWER = r"""#!/bin/sh
# The chaos reviewer (hive/chaos/loop.py): each review takes its issue's next verdict.
ctl=$1
n=$HIVE_ISSUE
plan="$ctl/reviews/$n"
v=$(head -n 1 "$plan" 2>/dev/null)
case "$v" in
    *+) v=${v%+} ;;
    ?*) sed -i 1d "$plan" ;;
esac
echo "review $n ${v:-met}" >> "$ctl/reviews.log"
case "$v" in
    crash) exit 3 ;;
    hang) exec sleep 600 ;;
    unmet) echo "HIVE-CRITERION: 1 unmet: the chaos reviewer wants another look"; exit 0 ;;
esac
echo "HIVE-CRITERION: 1 met"
"""


def check_red_once(ctl: str) -> str:
    """The check's shell command: red for the first merge result it sees, green after."""
    return f'if mkdir "{ctl}/check-red" 2>/dev/null; then echo "red once"; exit 1; fi'


def verdicts(issues: Sequence[int], seed: int) -> dict[int, tuple[str, ...]]:
    """Each issue's reviews before its accept, seeded: a third sent back once, a sixth
    crashing once, a twelfth hanging once, the rest accepted at once; and one issue in
    ESCALATE_EVERY (one at least) failing until the floor escalates it."""
    pick = random.Random(f"loop-{seed}")
    plan: dict[int, tuple[str, ...]] = {}
    for n in issues:
        roll = pick.random()
        plan[n] = (
            (SEND_BACK,)
            if roll < 1 / 3
            else (CRASH,)
            if roll < 1 / 2
            else (HANG,)
            if roll < 7 / 12
            else ()
        )
    if plan:
        for n in pick.sample(sorted(plan), max(1, len(plan) // ESCALATE_EVERY)):
            plan[n] = ESCALATED
    return plan


@dataclass(frozen=True)
class IssueEnd:
    """How an issue ended: closed with its merge's sha, or escalated with a sentence."""

    issue: int
    merged_sha: str | None
    closed: bool
    escalated_note: str | None = None


def review_counts(log: str) -> tuple[int, int, int]:
    """(sent back, crashed, hung): the reviews the chaos reviewer's log names so."""
    verdicts_seen = [line.split()[-1] for line in log.splitlines() if line.startswith("review ")]
    return verdicts_seen.count(SEND_BACK), verdicts_seen.count(CRASH), verdicts_seen.count(HANG)


def merged_once(ends: Sequence[IssueEnd], on_the_way: str = "") -> Check:
    """Each issue closed by its merge (a sha), or escalated with a sentence; nothing else.
    `on_the_way` says what the loop's faults did (measured, not judged)."""
    bad = []
    merged = escalated = 0
    for end in sorted(ends, key=lambda e: e.issue):
        if end.closed and end.merged_sha:
            merged += 1
        elif end.escalated_note is not None and end.escalated_note.strip():
            escalated += 1
        elif end.escalated_note is not None:
            bad.append(f"#{end.issue}: escalated without a sentence")
        else:
            state = "closed" if end.closed else "open"
            bad.append(f"#{end.issue}: {state}, not merged and not escalated")
    return Check(
        "every issue merged once or escalated",
        f"{merged} merged, {escalated} escalated of {len(ends)}{on_the_way}",
        tuple(bad),
    )


def on_main_once(
    merged: Mapping[int, str], on_main: Mapping[int, bool], lines: Mapping[int, Sequence[str]]
) -> Check:
    """`merged`: each merged issue's merge sha; `on_main`: whether that sha is main or an
    ancestor of it; `lines`: the work lines (`chaos N turn ...`) main's file of the issue
    holds. Each change is on main (none lost) and no turn's line is there twice."""
    bad = []
    for n, sha in sorted(merged.items()):
        held = list(lines.get(n, ()))
        twice = sorted({line for line in held if held.count(line) > 1})
        if not on_main.get(n, False):
            bad.append(f"#{n}: its merge {sha[:12]} is not on main")
        elif not held:
            bad.append(f"#{n}: main's file holds none of its turns' work")
        elif twice:
            bad.append(f"#{n}: main holds {twice[0]!r} {held.count(twice[0])} times")
    return Check("main holds each change once", f"{len(merged)} merges on main", tuple(bad))


@dataclass(frozen=True)
class PushKept:
    """A person's push as main holds it at the end."""

    sha: str
    path: str
    on_main: bool  # its commit is main or an ancestor of it
    held: bool  # main's file at `path` holds the line the push left there
    issue: int | None  # whose file it edited (None: a file of the person's own)


def kept_pushes(pushes: Sequence[PushKept], merged_after_conflict: int) -> Check:
    """Every push a person made is on main and its line is still there.
    `merged_after_conflict`: the turns that merged the base after a conflict."""
    bad = []
    for push in pushes:
        if not push.on_main:
            bad.append(f"{push.sha[:12]} ({push.path}): not on main")
        elif not push.held:
            bad.append(f"{push.sha[:12]}: main's {push.path} lost the person's line")
    edits = sum(1 for push in pushes if push.issue is not None)
    return Check(
        "main keeps every push of a person",
        f"{len(pushes)} pushes ({edits} to an issue's file, {len(pushes) - edits} clean),"
        f" {merged_after_conflict} turns merged the base after a conflict",
        tuple(bad),
    )
