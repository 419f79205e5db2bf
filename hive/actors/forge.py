"""The GitHub forge's loop (DESIGN 10), in the Queen's process: the poll of the labelled
issues (the webhook's fallback) and the night watch.

A pass polls (a quiet poll is a 304: no rate limit), tells the Queen when an issue came,
changed or closed, then lets the watch comment where it must. It runs every
HIVE_GITHUB_POLL_SECONDS, and at once when told IssuesChanged (the watch looks at new
verdicts then). A GitHub error is logged and the next pass tries again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from hive.actors.loop import LoopActor
from hive.actors.messages import FORGE, FORGE_WAKES
from hive.forge.github.intake import Intake, PollResult
from hive.forge.github.watch import Watch, WatchPass
from supervisors import Registry

log = logging.getLogger("hive.forge")


@dataclass(frozen=True)
class ForgePass:
    poll: PollResult
    watch: WatchPass

    def __bool__(self) -> bool:
        return bool(self.poll) or bool(self.watch)

    def __str__(self) -> str:
        return f"{self.poll}; {self.watch}"


class ForgeWork:
    def __init__(self, intake: Intake, watch: Watch, issues_changed: Callable[[], object]) -> None:
        self.intake = intake
        self.watch = watch
        self.issues_changed = issues_changed

    def run_once(self) -> ForgePass:
        polled = self.intake.poll()
        if polled.changed:
            self.issues_changed()
        return ForgePass(polled, self.watch.run_once())

    def close(self) -> None:
        pass


class ForgeActor(LoopActor):
    """Known as FORGE; see the module docstring."""

    def __init__(self, names: Registry, work: ForgeWork, poll_seconds: float) -> None:
        super().__init__(
            "forge",
            work,
            poll_seconds,
            registry=names,
            known_as=FORGE,
            wakes_on=FORGE_WAKES,
        )
