"""``Registry``: actors found by name, as OTP's registered processes.

An actor registers its ``actor_ref`` under a name when it starts, and unregisters when
it stops. A sender tells a message to the name and never holds the reference. So a
restarted actor is found again under the same name.

A message to a name that nothing holds now is dropped and logged at debug. The actor
may not have started yet, or be stopped or restarting. OTP's cast to a dead name fails
quietly in the same way. A sender that needs an answer asks. A message that must not be
lost is not sent this way.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

import pykka

log = logging.getLogger("supervisors.registry")


class Mailbox(Protocol):
    """What a name points at. That is a pykka ``ActorRef``, or any object that takes
    ``tell``."""

    def tell(self, message: Any) -> None: ...


class NameTaken(Exception):
    """Raised by ``register`` when another mailbox holds the name."""


class Registry:
    """Names and their mailboxes. It is thread-safe. Actors register from their own
    threads, and senders tell from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._names: dict[str, Mailbox] = {}

    def register(self, name: str, mailbox: Mailbox) -> None:
        """Hold ``name`` for ``mailbox``. Raises ``NameTaken`` when a live actor holds it.
        A dead actor's stale entry is replaced."""
        with self._lock:
            held = self._names.get(name)
            if held is not None and held is not mailbox and _alive(held):
                raise NameTaken(f"the name {name!r} is taken")
            self._names[name] = mailbox

    def unregister(self, name: str, mailbox: Mailbox) -> None:
        """Let ``name`` go if ``mailbox`` still holds it (a successor's entry stays).
        Safe twice."""
        with self._lock:
            if self._names.get(name) is mailbox:
                del self._names[name]

    def whereis(self, name: str) -> Mailbox | None:
        """The mailbox that holds ``name``. None when none does, or when its actor has
        stopped. An actor counts as stopped from the moment its stop began, since it
        takes no more messages."""
        with self._lock:
            mailbox = self._names.get(name)
            if mailbox is not None and not _alive(mailbox):
                del self._names[name]
                return None
            return mailbox

    def tell(self, name: str, message: Any) -> bool:
        """Send ``message`` to the actor named ``name`` and return at once. False when the
        name is not held or its actor is dead. The message is then dropped and logged at
        debug."""
        mailbox = self.whereis(name)
        if mailbox is None:
            log.debug("no actor named %r now: %r dropped", name, message)
            return False
        try:
            mailbox.tell(message)
        except pykka.ActorDeadError:
            log.debug("the actor named %r is dead: %r dropped", name, message)
            return False
        return True


def _alive(mailbox: Mailbox) -> bool:
    is_alive = getattr(mailbox, "is_alive", None)
    return bool(is_alive()) if callable(is_alive) else True
