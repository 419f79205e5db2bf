"""Restart intensity: at most ``intensity`` restarts in ``period_seconds`` (OTP's
MaxR/MaxT). One more and the supervisor gives up: it stops its children and fails."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

DEFAULT_INTENSITY = 1
DEFAULT_PERIOD_SECONDS = 5.0


class RestartIntensity:
    def __init__(
        self,
        intensity: int = DEFAULT_INTENSITY,
        period_seconds: float = DEFAULT_PERIOD_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(intensity, bool) or not isinstance(intensity, int) or intensity < 0:
            raise ValueError(f"intensity must be an int >= 0, got {intensity!r}")
        if not isinstance(period_seconds, int | float) or not period_seconds > 0:
            raise ValueError(f"period_seconds must be > 0, got {period_seconds!r}")
        self.intensity = intensity
        self.period_seconds = float(period_seconds)
        self._clock = clock
        self._restarts: deque[float] = deque()

    def allow(self) -> bool:
        """Record one restart; ``False`` when it would exceed the intensity (give up)."""
        now = self._clock()
        while self._restarts and now - self._restarts[0] >= self.period_seconds:
            self._restarts.popleft()
        self._restarts.append(now)
        return len(self._restarts) <= self.intensity
