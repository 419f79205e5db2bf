"""The publish job's port to a forge (HIVE_PUBLISH=github): the steps a forge runs in
place of the local ones (`ForgeSteps`), what a step raises when its attempt is gone
(`Gone`), and the send-back a red step calls (`Red`). The job's own steps are
`hive.jobs.publish`; the GitHub forge's are `hive.forge.github.publish`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from hive.jobs.engine import StepContext
from hive.rules.jobs import Result
from hive.store.publish import PublishFacts


class Gone(Exception):
    """The job's attempt is no longer the accepted current one."""


Red = Callable[[StepContext, PublishFacts, str], Result]


class ForgeSteps(Protocol):
    """The steps a forge runs in place of the local ones (see the module)."""

    def checks(self, ctx: StepContext, facts: PublishFacts, red: Red) -> Result: ...

    def merge(self, ctx: StepContext, facts: PublishFacts, red: Red) -> Result: ...

    def push(self, ctx: StepContext, facts: PublishFacts, red: Red) -> Result: ...

    def gate_sha(self, facts: PublishFacts) -> str | None:
        """The commit whose recorded checks open the gate."""
        ...

    def gate_waits_because(self, facts: PublishFacts) -> str:
        """Why the gate is shut, for the job's sentence."""
        ...

    def after_close(self, ctx: StepContext, facts: PublishFacts, sha: str) -> None: ...
