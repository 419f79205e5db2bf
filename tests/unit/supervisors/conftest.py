from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from .helpers import Journal


@pytest.fixture
def journal() -> Iterator[Journal]:
    j = Journal()
    yield j
    for actor in j.actors:
        actor.actor_ref.stop(block=False)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown so blocked test actors end and no thread outlives its test."""
    event = threading.Event()
    yield event
    event.set()
