"""The shared half of a bee's start (DESIGN 5.4, the client's `cutAndStart`). The Queen's
own bee and a runner's both start through it.

It cuts the worktree `queen-<issue>`. The branch continues when it exists, else it
starts from base. It starts the turn with its transcript held back. Then it writes the
caller's ledger. For the Queen that is an insert; for a runner it is an update that
resets `dispatched_at`. The ledger stays with each caller. Only then does the turn's
stream flow, so the row exists before anything can close it. A ledger that did not land
stops the turn, and nothing of it is kept.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dulwich.objects import ObjectID

from hive.agents import Ending, Turn, TurnContext, start_turn
from hive.agents.conversation import RESUMING_AGENTS
from hive.agents.launch import Launch
from hive.agents.transcript import OnLine
from hive.git.importing import UnknownPrerequisite, import_bundle
from hive.git.repo import Checkout, branch_ref, deepen_base, refresh_base
from hive.git.worktrees import Cut, cut_worktree, worktree_path
from hive.store.conversations import Earlier

log = logging.getLogger("hive.start")

# the stop reason of a turn whose ledger did not land
NO_LEDGER = "its order was not written"


@dataclass(frozen=True)
class StartPlan:
    """What a start needs beyond the checkout. It holds the issue, the branch's base (a
    ref or the order's base sha), the boundary, the brief and the credential. The
    credential is never printed."""

    issue: int
    title: str
    body: str
    base: str
    base_sha: str | None
    boundary: tuple[str, ...]
    brief: str
    agent: str
    key_env: str = "HIVE_KEY"
    key: str = field(default="", repr=False)
    turn_max_seconds: float = 3600.0
    repo_url: str | None = None  # to fetch base when the order's base sha is not here
    # what reaches the agent's process, and as which user
    launch: Launch = field(default_factory=Launch)


@dataclass(frozen=True)
class Started:
    cut: Cut
    turn: Turn
    base_rev: str  # what the branch was cut from: the bundle's base


def cut_and_start(
    checkout: Checkout,
    plan: StartPlan,
    ledger: Callable[[], bool],
    *,
    on_line: OnLine,
    on_end: Callable[[Ending], None] | None = None,
    on_spawn: Callable[[Turn], None] | None = None,
    earlier: Callable[[bool, bool], Earlier] | None = None,
) -> Started | None:
    """Cut, start, write the ledger, then begin (see the module). Returns None when the
    ledger did not land; the turn was then stopped.

    Raises GitError or TurnStartError before the ledger. Raises whatever the ledger
    raises, after stopping the turn. `on_spawn` hears of the turn as soon as it exists,
    before the ledger, so a kill can reach it. `earlier(bundle, conversation)` reads in
    one go what the issue's last attempt left. That is the bundle the branch continues
    from, and the conversation that a resuming agent resumes. `_read_earlier` says which
    it asks for."""
    with checkout.lock:
        base = _cut_base(checkout, plan)
        left = _read_earlier(checkout, plan, earlier)
        _continue_from_bundle(checkout, plan.issue, left.bundle, plan.repo_url)
        cut = cut_worktree(checkout.repo, plan.issue, base, checkout.workdir)
    ctx = TurnContext(
        issue=plan.issue,
        title=plan.title,
        body=plan.body,
        branch=cut.branch,
        boundary=plan.boundary,
        brief=plan.brief,
        worktree=Path(cut.path),
        key_env=plan.key_env,
        key=plan.key,
        turn_max_seconds=plan.turn_max_seconds,
        on_line=on_line,
        on_end=on_end,
        launch=plan.launch,
        resume=left.conversation,
    )
    turn = start_turn(plan.agent, ctx, begin=False)
    try:
        if on_spawn is not None:
            on_spawn(turn)
        landed = ledger()
    except BaseException:
        turn.stop(NO_LEDGER)
        raise
    if not landed:
        turn.stop(NO_LEDGER)
        return None
    turn.begin()
    return Started(cut, turn, base)


def _read_earlier(
    checkout: Checkout, plan: StartPlan, earlier: Callable[[bool, bool], Earlier] | None
) -> Earlier:
    """What the issue's last attempt left, in one read. It asks for the bundle unless a
    worktree of the issue is still on this disk (`_continue_from_bundle`). It asks for
    the conversation when the agent resumes one. A failed read fails the start when it
    asked for the bundle, since the branch would not be the stored one. Otherwise the
    turn starts afresh."""
    if earlier is None:
        return Earlier()
    bundle = not worktree_path(checkout.workdir, plan.issue).exists()
    conversation = plan.agent in RESUMING_AGENTS
    if not (bundle or conversation):
        return Earlier()
    try:
        return earlier(bundle, conversation)
    except Exception as err:
        if bundle:
            raise
        log.warning("earlier conversation not read (%s)", err, extra={"issue": plan.issue})
        return Earlier()


def _cut_base(checkout: Checkout, plan: StartPlan) -> str:
    """The order's base sha when this clone has it, so the branch starts where the Queen
    judged the issue. If the clone lacks it, base is fetched once. Failing that, the
    base ref."""
    if plan.base_sha is None:
        return plan.base
    sha = ObjectID(plan.base_sha.encode())
    if sha not in checkout.repo.object_store and plan.repo_url is not None:
        refresh_base(checkout.repo, plan.repo_url, plan.base, auth=checkout.auth)
        # a shallow clone (HIVE_CLONE_DEPTH) may not reach back to an older base
        deepen_base(checkout.repo, plan.repo_url, plan.base, [plan.base_sha], auth=checkout.auth)
    return plan.base_sha if sha in checkout.repo.object_store else plan.base


def _continue_from_bundle(
    checkout: Checkout, issue: int, data: bytes | None, repo_url: str | None = None
) -> None:
    """Bring the branch to what the last ended attempt stored. That is the truth, since
    another runner may have run a later attempt than the one this clone remembers. The
    stored bundle is imported; that does nothing when the branch is already here. It is
    not imported while a worktree of the issue is still on this disk, because its files
    belong to the branch as it is here. The read then asked for no bundle, and `data`
    is None."""
    if data is None:
        return
    try:
        try:
            import_bundle(checkout.repo, issue, data)
        except UnknownPrerequisite as lacking:
            # a shallow clone may lack the older base the bundle was cut from
            if repo_url is None or not deepen_base(
                checkout.repo, repo_url, checkout.base, lacking.shas, auth=checkout.auth
            ):
                raise
            import_bundle(checkout.repo, issue, data)
    except Exception as err:  # a bad or unusable bundle: the branch as it is here
        had = "the branch here" if branch_ref(issue) in checkout.repo.refs else "base"
        log.warning(
            "earlier bundle not imported (%s); starting from %s", err, had, extra={"issue": issue}
        )


@dataclass(frozen=True)
class StartConfig:
    """How this process starts a turn. It names the agent, the key's variable, the turn's
    bound, the repository to fetch a missing base from and how agents are launched."""

    agent: str
    key_env: str = "HIVE_KEY"
    turn_max_seconds: float = 3600.0
    repo_url: str | None = None
    launch: Launch = field(default_factory=Launch)  # HIVE_AGENT_PASS_ENV, _USER, _BIN


def plan_of(
    config: StartConfig,
    *,
    issue: int,
    title: str,
    body: str,
    base: str,
    base_sha: str | None,
    boundary: tuple[str, ...],
    brief: str,
    key: str,
) -> StartPlan:
    """A start plan with this process's agent, key variable, turn bound and repo URL."""
    return StartPlan(
        issue=issue,
        title=title,
        body=body,
        base=base,
        base_sha=base_sha,
        boundary=boundary,
        brief=brief,
        agent=config.agent,
        key_env=config.key_env,
        key=key,
        turn_max_seconds=config.turn_max_seconds,
        repo_url=config.repo_url,
        launch=config.launch,
    )
