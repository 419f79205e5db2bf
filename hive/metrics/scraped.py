"""The metrics read at scrape time rather than counted: the queue from the store, the
credit ledger's sums, and the last rate limit GitHub reported. Each collector runs on
every scrape of `/metrics`; one whose source raises logs why and the scrape still answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

log = logging.getLogger("hive.metrics")

# the ledger's kinds by their label (granted, sold, burned)
CREDIT_KINDS = (("granted", "grant"), ("sold", "sale"), ("burned", "burn"))
QUEUE_METRICS = ("hive_orders_queued", "hive_orders_in_flight", "hive_oldest_queued_seconds")


@dataclass(frozen=True)
class QueueNumbers:
    """What one cheap store query answers at scrape time."""

    queued: int  # orders with queued_at set, not yet claimed, not finished
    in_flight: int  # orders not finished (queued, claimed or run by the Queen)
    oldest_queued_seconds: float  # age of the oldest unclaimed queued order; 0 when none


class LastValue(Collector):
    """A gauge with no sample until `set()` is first called (0 would read as a limit
    spent on a process that never asked)."""

    def __init__(self, name: str, documentation: str) -> None:
        self.name = name
        self.documentation = documentation
        self._value: float | None = None

    def set(self, value: float) -> None:
        self._value = float(value)  # one assignment: a scrape reads the old or the new

    def describe(self) -> Iterable[Metric]:
        return [GaugeMetricFamily(self.name, self.documentation)]

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(self.name, self.documentation)
        value = self._value
        if value is not None:
            family.add_metric([], value)
        return [family]


class CreditCollector(Collector):
    """hive_credit_tokens_total{kind}: the ledger's sums, which only grow (its rows are
    never changed or removed), so a counter."""

    def __init__(self) -> None:
        self.read: Callable[[], Mapping[str, int]] | None = None

    def describe(self) -> Iterable[Metric]:
        return [self._family({})]

    def collect(self) -> Iterable[Metric]:
        sums: Mapping[str, int] = {}
        if self.read is not None:
            try:
                sums = self.read()
            except Exception as err:  # a scrape must answer even when the store does not
                log.warning("credit sums unavailable for this scrape: %s", err)
        return [self._family(sums)]

    @staticmethod
    def _family(sums: Mapping[str, int]) -> CounterMetricFamily:
        family = CounterMetricFamily(
            "hive_credit_tokens_total",
            "Credit tokens (half US cents) in the ledger, by kind: granted, sold (turns sold"
            " at HIVE_CREDIT_MARKUP times their cost), burned (lots past their days).",
            labels=("kind",),
        )
        for kind, ledger_kind in CREDIT_KINDS:
            family.add_metric([kind], int(sums.get(ledger_kind, 0)))
        return family


class QueueCollector(Collector):
    def __init__(self, read: Callable[[], QueueNumbers]) -> None:
        self._read = read

    def describe(self) -> Iterable[Metric]:
        # without describe(), registering would call collect() and so query the store
        return list(_queue_families())

    def collect(self) -> Iterable[Metric]:
        try:
            numbers = self._read()
        except Exception as err:  # a scrape must answer even when the store does not
            log.warning("queue numbers unavailable for this scrape: %s", err)
            return list(_queue_families())
        queued, in_flight, oldest = _queue_families()
        queued.add_metric([], numbers.queued)
        in_flight.add_metric([], numbers.in_flight)
        oldest.add_metric([], numbers.oldest_queued_seconds)
        return [queued, in_flight, oldest]


def _queue_families() -> Iterator[GaugeMetricFamily]:
    yield GaugeMetricFamily(
        "hive_orders_queued", "Orders queued for a runner and not yet claimed (from the store)."
    )
    yield GaugeMetricFamily(
        "hive_orders_in_flight", "Orders not yet finished: queued, claimed or run by the Queen."
    )
    yield GaugeMetricFamily(
        "hive_oldest_queued_seconds",
        "Age of the oldest queued, unclaimed order, in seconds; 0 when none waits.",
        unit="seconds",
    )
