"""Actors found by name: a name is held while its actor lives, a message to a name
nothing holds is dropped, and a live actor's name cannot be taken."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from supervisors import NameTaken, Registry, SupervisedActor


class Named(SupervisedActor):
    """Holds `name` in `names`; records what it is told."""

    def __init__(self, names: Registry, name: str, fail_start: bool = False) -> None:
        super().__init__()
        self.fail_start = fail_start
        self.heard: list[Any] = []
        self.got = threading.Event()
        self.register_as(names, name)

    def on_start(self) -> None:
        if self.fail_start:
            raise RuntimeError("cannot start")

    def on_receive(self, message: Any) -> None:
        self.heard.append(message)
        self.got.set()


def started(names: Registry, name: str, **kwargs: Any) -> Named:
    ref = Named.start(names, name, **kwargs)
    actor = SupervisedActor.of(ref)
    assert isinstance(actor, Named) and actor.supervisor_started.wait(5)
    return actor


def test_a_message_told_to_a_name_reaches_the_actor_that_holds_it() -> None:
    names = Registry()
    actor = started(names, "queen")
    assert names.whereis("queen") is actor.actor_ref
    assert names.tell("queen", "an order ended")
    assert actor.got.wait(5) and actor.heard == ["an order ended"]
    actor.actor_ref.stop()


def test_the_name_goes_with_the_actor_and_a_message_to_it_is_dropped(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="supervisors.registry")
    names = Registry()
    actor = started(names, "queen")
    actor.actor_ref.stop()
    assert actor.supervisor_exit.wait(5)
    assert names.whereis("queen") is None
    assert names.tell("queen", "an order ended") is False
    assert "no actor named 'queen' now" in caplog.text


def test_an_actor_that_fails_its_start_holds_no_name() -> None:
    names = Registry()
    actor = started(names, "queen", fail_start=True)
    assert actor.supervisor_exit.wait(5)
    assert names.whereis("queen") is None


def test_a_live_actors_name_cannot_be_taken_and_its_successor_takes_it_after() -> None:
    names = Registry()
    first = started(names, "queen")
    second = started(names, "queen")  # its start fails: the name is taken
    assert second.supervisor_exit.wait(5)
    assert isinstance(second.supervisor_exit.reason.exception, NameTaken)  # type: ignore[union-attr]
    assert names.whereis("queen") is first.actor_ref
    first.actor_ref.stop()
    third = started(names, "queen")
    assert names.whereis("queen") is third.actor_ref
    third.actor_ref.stop()
    assert names.whereis("queen") is None


def test_a_tell_to_a_dead_actor_still_named_is_dropped() -> None:
    names = Registry()
    actor = started(names, "claimer")
    ref = actor.actor_ref
    ref.stop()
    assert names.whereis("claimer") is None  # a stopped actor holds no name
    names.register("claimer", ref)  # a stale entry: its actor is dead
    assert names.tell("claimer", "a slot is free") is False
    replacement = started(names, "claimer")  # a dead holder's name is free to take
    assert names.whereis("claimer") is replacement.actor_ref
    replacement.actor_ref.stop()


def test_unregister_lets_go_only_of_its_own_entry() -> None:
    names = Registry()

    class Box:
        def tell(self, message: Any) -> None:
            pass

    mine, theirs = Box(), Box()
    names.register("drain", theirs)
    names.unregister("drain", mine)
    assert names.whereis("drain") is theirs
    with pytest.raises(NameTaken):
        names.register("drain", mine)
    names.unregister("drain", theirs)
    names.unregister("drain", theirs)  # twice: safe
    assert names.whereis("drain") is None
