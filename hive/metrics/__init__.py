"""The hive's metrics (DESIGN 8): every one declared once, on a registry of its own.

One `HiveMetrics` per process, each on its own `CollectorRegistry` (never the global
default), so tests and an embedding application never share counters. The tree makes one
and hands it to the actors; `/metrics` renders its registry.

- `declared`: `HiveMetrics`, the counters, gauges and histograms the actors move;
- `scraped`: what is read at scrape time (the queue from the store, the credit ledger);
- `github`: what the GitHub client counts;
- `registry`: the registry without `_created` series, and `hive_build_info`'s labels.
"""

from hive.metrics.declared import HiveMetrics
from hive.metrics.github import GitHubMetrics
from hive.metrics.scraped import QueueNumbers

__all__ = ["GitHubMetrics", "HiveMetrics", "QueueNumbers"]
