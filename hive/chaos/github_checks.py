"""The invariants `hive chaos --loop --forge github` adds (pure).

- `pulls_merged_once`: each issue the store says merged has exactly one merged pull
  request on GitHub, merged as the sha the store holds; an escalated issue has none the
  hive merged (a person's merge at another head is theirs).
- `never_two_open`: at no sample had an issue two open pull requests.
- `closed_once`: every merged issue was closed on GitHub exactly once and its merge
  commented once; no other issue was closed.
- `followed_last`: each issue's title in the store is GitHub's last (a webhook delivered
  twice and out of order changed nothing back).

The loop's own invariants hold too (every issue merged once or escalated, main holds
each change once, no issue past its state's bound: `hive.chaos.dwell`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hive.chaos.invariants import Check


@dataclass(frozen=True)
class PullEnd:
    """A pull request as the fake GitHub holds it at the end."""

    number: int
    issue: int
    merged: bool
    merge_sha: str | None
    by_person: bool


def pulls_merged_once(
    merged: Mapping[int, str],
    escalated: Sequence[int],
    pulls: Sequence[PullEnd],
    foreign: Sequence[int] = (),
) -> Check:
    """`merged`: each issue the store closed with its merge sha; `escalated`: the issues
    escalated; `pulls`: every pull request of the run; `foreign`: the issues whose pull
    request a person merged at a head nobody accepted (never the work's merge)."""
    bad = [f"#{n}: a person's merge at another head was taken as its work"
           for n in sorted(set(foreign) & set(merged))]  # fmt: skip
    for n, sha in sorted(merged.items()):
        ours = [p for p in pulls if p.issue == n and p.merged]
        if len(ours) != 1:
            bad.append(f"#{n}: {len(ours)} merged pull requests")
        elif ours[0].merge_sha != sha:
            bad.append(f"#{n}: merged as {str(ours[0].merge_sha)[:12]}, the store says {sha[:12]}")
    for n in sorted(escalated):
        hive = [p for p in pulls if p.issue == n and p.merged and not p.by_person]
        if hive:
            bad.append(f"#{n}: escalated, yet the hive merged pull request #{hive[0].number}")
    total = len(pulls)
    by_person = sum(1 for p in pulls if p.merged and p.by_person)
    return Check(
        "every merge on GitHub once",
        f"{total} pull requests, {sum(1 for p in pulls if p.merged)} merged "
        f"({by_person} by a person)",
        tuple(bad),
    )


def never_two_open(most_open: Mapping[int, int], samples: int) -> Check:
    """`most_open`: the most open pull requests each issue had at one sample."""
    bad = [f"#{n}: {count} open pull requests at once" for n, count in sorted(most_open.items())
           if count > 1]  # fmt: skip
    return Check("never two open pull requests for one issue", f"{samples} samples", tuple(bad))


def closed_once(
    merged: Sequence[int], closes: Sequence[int], merge_comments: Mapping[int, int]
) -> Check:
    """`closes`: each issue's open -> closed on GitHub, in order; `merge_comments`: the
    hive's merge comments on each issue."""
    bad = []
    wanted = set(merged)
    for n in sorted(wanted):
        if closes.count(n) != 1:
            bad.append(f"#{n}: merged and closed {closes.count(n)} times")
        if merge_comments.get(n, 0) != 1:
            bad.append(f"#{n}: its merge commented {merge_comments.get(n, 0)} times")
    for n in sorted(set(closes) - wanted):
        bad.append(f"#{n}: closed on GitHub without its merge")
    for n in sorted(set(merge_comments) - wanted):
        bad.append(f"#{n}: a merge commented without its merge")
    return Check(
        "every merged issue closed once, no other",
        f"{len(closes)} closes of {len(wanted)} merged issues",
        tuple(bad),
    )


def followed_last(
    store: Mapping[int, str], newer: Mapping[int, str], older: Mapping[int, str]
) -> Check:
    """`newer` and `older`: the titles of each issue edited twice, whose webhooks came
    newest first, then the older, then the newest again. The store must never hold the
    older one (a stale payload changed nothing); it holds the newer, or the title from
    before (a closed issue's edits are not followed)."""
    bad = [f"#{n}: the store says {store.get(n)!r}, the older of two edits delivered late"
           for n, title in sorted(older.items()) if store.get(n) == title]  # fmt: skip
    followed = sum(1 for n, title in newer.items() if store.get(n) == title)
    return Check(
        "each issue as GitHub last said it",
        f"{len(newer)} issues edited twice, webhooks out of order and twice; "
        f"{followed} followed the newest",
        tuple(bad),
    )
