"""The shape every long-running actor shares (STYLE: River's services).

The work is a plain object with `run_once()` and `close()`. `run_once()` is one pass.
It returns a small result that is true when something happened and prints as one line.
Tests call `run_once()` directly.

`LoopActor` only waits, calls the pass and logs that line. It waits `interval_seconds`,
or less when woken. Two things wake it.

- A message it `wakes_on` (`hive.actors.messages`). Given a `registry`, the actor is
  found there `known_as` its name.
- Given a `listen_url`, a NOTIFY on its `listen_channels` (`hive_orders` by default)
  whose payload `listen_skips` does not skip. A NOTIFY is only a hint; the pass
  re-reads the store. With `listen_one_of`, a hint goes to one hungry
  (`listen_hungry`) `one_of` listener of the process, not to all (`hive.store.listen`).

With `jitter`, each wait moves by up to that fraction of the interval either way
(`hive.rules.jitter`). So loops started together do not poll in step. The loop runs in
a thread of its own, never in a message handler; a handler only wakes it. So a stop is
answered within WAKE_SLICE_SECONDS.

A pass that raises is logged, and the loop goes on at its next interval. The store and
git errors it meets are transient, and a crash would only restart the same loop.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from hive.rules.jitter import jittered
from hive.store.listen import ORDERS_CHANNEL, Listener, Reason
from supervisors import Registry, SupervisedActor

# a wait is cut in slices this long so a stop or an in-process wake is seen at once
WAKE_SLICE_SECONDS = 0.2
# how long a stop waits for the pass in hand before closing the work without it: below
# every loop's shutdown in hive/tree.py (5 s), so `close()` (the Queen lease's release)
# always runs, and a pass that outlives it is fenced out of the store by the lease
PASS_JOIN_SECONDS = 4.0


class Work(Protocol):
    def run_once(self) -> Any: ...

    def close(self) -> None: ...


class LoopActor(SupervisedActor):
    """An actor that runs `work` in a loop (see the module).

    `on_start` starts the loop thread, and the first pass runs at once. `on_stop` asks
    the loop to end and waits up to `join_seconds` for the pass in hand. Then it calls
    `work.close()`. A pass still running then is left to finish on its own thread.
    Stopping twice, or before start, is safe. A message it `wakes_on` starts the next
    pass at once. Any other message is logged at debug and dropped."""

    def __init__(
        self,
        name: str,
        work: Work,
        interval_seconds: float,
        *,
        registry: Registry | None = None,
        known_as: str | None = None,
        wakes_on: tuple[type, ...] = (),
        listen_url: str | None = None,
        listen_skips: Callable[[str], bool] | None = None,
        listen_channels: tuple[str, ...] = (ORDERS_CHANNEL,),
        listen_one_of: bool = False,
        listen_hungry: Callable[[], bool] | None = None,
        jitter: float = 0.0,
        draw: Callable[[], float] = random.random,
        join_seconds: float = PASS_JOIN_SECONDS,
    ) -> None:
        super().__init__()
        self.name = name
        self.work = work
        self.interval_seconds = interval_seconds
        self.wakes_on = wakes_on
        # set by a message handler (or a stop): the loop's wait ends at once
        self.wake = threading.Event()
        self.listen_url = listen_url
        self.listen_skips = listen_skips
        self.listen_channels = listen_channels
        self.listen_one_of = listen_one_of
        self.listen_hungry = listen_hungry
        self.jitter = jitter
        self.draw = draw
        self.join_seconds = join_seconds
        self.log = logging.getLogger(f"hive.{name}")
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._listener: Listener | None = None
        if registry is not None:
            self.register_as(registry, known_as or name)

    def on_receive(self, message: Any) -> None:
        """Wake the loop on a message it `wakes_on`. The pass runs in the loop's thread."""
        if isinstance(message, self.wakes_on):
            self.wake.set()
        else:
            self.log.debug("%s: %r not for it; dropped", self.name, message)

    def on_start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=f"hive-{self.name}", daemon=True)
        self._thread.start()

    def on_stop(self) -> None:
        self._stopping.set()
        self.wake.set()
        if self._thread is not None:
            self._thread.join(self.join_seconds)
            if self._thread.is_alive():
                self.log.warning(
                    "%s pass still running after %gs; closing without it",
                    self.name,
                    self.join_seconds,
                )
        self.work.close()

    def _loop(self) -> None:
        failing = 0  # passes failed in a row: the first is logged whole, the rest in a line
        try:
            # LISTEN before the first look at the table: a NOTIFY sent after that look
            # is heard; listening only at the first wait lost it, and the work waited
            # for the next poll
            self._listen()
            while not self._stopping.is_set():
                try:
                    result = self.work.run_once()
                except Exception as err:
                    failing += 1
                    if failing == 1:
                        self.log.exception("%s pass failed; next at its interval", self.name)
                    else:
                        self.log.warning(
                            "%s pass failed again (%d in a row): %s", self.name, failing, err
                        )
                else:
                    if failing:
                        self.log.info("%s pass works again after %d failures", self.name, failing)
                        failing = 0
                    if result:
                        self.log.info("%s", result)
                self._wait(self.next_wait())
        finally:
            self._drop_listener()

    def next_wait(self) -> float:
        """The seconds to the next poll. That is the interval, jittered when asked."""
        if not self.jitter:
            return self.interval_seconds
        return jittered(self.interval_seconds, self.draw(), self.jitter)

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        listener = self._listen()
        while not self._stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if listener is None:
                if self.wake.wait(remaining):
                    self.wake.clear()
                    return
                continue
            if self.wake.is_set():
                self.wake.clear()
                return
            try:
                heard = listener.wait(min(remaining, WAKE_SLICE_SECONDS))
            except Exception as err:
                # a failure the listener cannot mend itself (it reconnects after a lost
                # connection; LISTEN refused on a standby is not that) must not end the
                # loop's thread while the actor looks alive: drop it, pass, listen anew
                self.log.warning("LISTEN failed (%s); listening again after a pass", err)
                self._drop_listener()
                return
            if heard.recheck:
                # one pass answers every hint already queued: eight orders queued at
                # once are one wake, not eight passes
                while listener.wait(0).reason is Reason.NOTIFIED:
                    pass
                return

    def _drop_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.close()
            except Exception as err:
                self.log.debug("closing a failed listener: %s", err)

    def _listen(self) -> Listener | None:
        if self.listen_url is None or self._listener is not None:
            return self._listener
        try:
            self._listener = Listener(
                self.listen_url,
                self.listen_skips,
                channels=self.listen_channels,
                one_of=self.listen_one_of,
                hungry=self.listen_hungry,
            )
        except Exception as err:  # the store is away: poll until it is back
            self.log.warning("cannot LISTEN (%s); polling every %gs", err, self.interval_seconds)
        return self._listener
