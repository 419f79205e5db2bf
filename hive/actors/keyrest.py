"""Keys that rest after a provider refused a turn on them (RULES 7), as the Queen sees
it from the orders' endings.

A transient refusal (rate limit, overload; the order ended `refused`) rests its key for
`key_rest_seconds(strikes)`: 5 s, doubling with each refusal in a row, at most 300 s. A
quota refusal (`quota exhausted`) rests it for the cap: the provider's reset time is not
known here. Any other ending on the key ends the run of strikes. A resting key is
skipped by the key choice, so the next free key is used.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from hive.rules.keys import KEY_REST_CAP_SECONDS, key_rest_seconds
from hive.rules.states import QUOTA_EXHAUSTED, REFUSED_OUTCOME
from hive.store.orders import Order


class KeyRests:
    def __init__(self) -> None:
        self.strikes: dict[int, int] = {}
        self._until: dict[int, datetime] = {}
        self._seen: datetime | None = None  # the newest ending already counted

    def observe(self, orders: Iterable[Order]) -> None:
        """Count the endings not seen yet, oldest first."""
        ended: list[tuple[datetime, int, Order]] = []
        for o in orders:
            if o.finished_at is None or o.key_index is None:
                continue
            if self._seen is None or o.finished_at > self._seen:
                ended.append((o.finished_at, o.key_index, o))
        ended.sort(key=lambda item: item[0])
        for at, key, order in ended:
            if order.outcome == REFUSED_OUTCOME:
                self.strikes[key] = self.strikes.get(key, 0) + 1
                rest = key_rest_seconds(self.strikes[key])
                self._until[key] = at + timedelta(seconds=rest)
            elif order.outcome == QUOTA_EXHAUSTED:
                self.strikes[key] = self.strikes.get(key, 0) + 1
                self._until[key] = at + timedelta(seconds=KEY_REST_CAP_SECONDS)
            else:
                self.strikes[key] = 0
                self._until.pop(key, None)
            self._seen = at

    def resting(self, now: datetime) -> dict[int, int]:
        """The keys resting at `now`, with the whole seconds left (at least 1)."""
        return {
            key: max(1, int((until - now).total_seconds()))
            for key, until in self._until.items()
            if until > now
        }
