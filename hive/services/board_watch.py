"""A board's live side: who watches it (the store's triggers notify the board's channel
only while a board watches) and the listener on that channel, for `hive.board.hub`."""

from __future__ import annotations

from hive.store import board
from hive.store.board import BOARD_CHANNEL
from hive.store.db import Db
from hive.store.listen import Listener, Reason, Wake

__all__ = ["Listener", "Reason", "Wake", "listener", "unwatch", "watch"]


def watch(db: Db, holder: str, ttl_seconds: float) -> None:
    """`holder` watches the board for `ttl_seconds` more."""
    board.watch(db, holder, ttl_seconds)


def unwatch(db: Db, holder: str) -> None:
    """`holder` no longer watches the board."""
    board.unwatch(db, holder)


def listener(url: str) -> Listener:
    """A listener on the board's channel, on the process's shared LISTEN connection."""
    return Listener(url, channels=(BOARD_CHANNEL,))
