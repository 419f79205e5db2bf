"""The chat's loop (DESIGN 11, agents among themselves): the room's work
(`hive.chat.room.Room`) one pass after another. A pass waits in its own sync for the
room's next message (at most a second), so the loop itself does not wait between passes.
"""

from __future__ import annotations

from hive.actors.loop import LoopActor
from hive.chat.room import Room
from supervisors import Registry

CHAT = "chat"


class ChatActor(LoopActor):
    """Known as "chat". Stopping waits for the pass in hand (its sync's wait, at most a
    second, then the sends in hand); the rows not sent yet stay in the store."""

    def __init__(self, room: Room, registry: Registry) -> None:
        super().__init__(CHAT, room, 0.0, registry=registry)
