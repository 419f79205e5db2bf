"""A `hive serve` told to stop while it starts (settings, migrations, the clone): it
holds no work, so it exits 0 at once instead of dying of the signal (exit 143), which an
orchestrator would count as a failed stop. `supervisors.SignalBridge` replaces this
handler when the tree starts (and puts it back when the tree is done)."""

from __future__ import annotations

import os
import signal
from types import FrameType


def _exit_clean(signum: int, frame: FrameType | None) -> None:
    os._exit(0)


def stop_before_start() -> None:
    """Exit 0 on SIGTERM until the tree's bridge takes the signal (main thread only)."""
    signal.signal(signal.SIGTERM, _exit_clean)
