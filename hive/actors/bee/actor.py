"""`BeeActor`: the bee pool's child that owns one bee (`hive.actors.bee.bee`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pykka

from hive.actors.bee.bee import Bee
from hive.actors.bee.state import BeeStatus
from hive.actors.messages import BeeDone
from supervisors import SupervisedActor


class BeeActor(SupervisedActor):
    """A temporary pool child, one per order. `on_start` starts the bee's thread and
    returns. The actor stops itself once the order has ended. An `on_stop` before that
    hands the bee back, bounded by HAND_BACK_SECONDS. That happens when the tree stops
    without a drain, or the drain already gave up. A kill SIGKILLs the turn's process
    group."""

    def __init__(self, bee: Bee, leave: Callable[[bool], None] | None = None) -> None:
        super().__init__()
        self.bee = bee
        self._leave = leave

    def on_start(self) -> None:
        self.bee.run(owner=self, leave=self._leave, on_done=self._done)

    def on_receive(self, message: Any) -> None:
        """Stop on `BeeDone`, which the bee's own thread tells once the order has ended."""
        if isinstance(message, BeeDone):
            self.stop()

    def on_stop(self) -> None:
        if not self.bee.ended:
            self.bee.hand_back()

    def status(self) -> BeeStatus:
        """What the bee is doing. It answers at once while its turn runs, since the bee's
        thread watches the turn, never a handler. Ask it through a proxy."""
        return self.bee.status()

    def _done(self) -> None:
        with contextlib.suppress(pykka.ActorDeadError):  # stopped already: nothing to do
            self.actor_ref.tell(BeeDone(self.bee.issue))
