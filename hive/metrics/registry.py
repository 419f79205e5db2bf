"""The metrics' registry, which exports no `_created` series, and `hive_build_info`'s
labels. Used once per process, when `HiveMetrics` is built.
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Iterable

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric

from hive import __version__

# the libraries whose version hive_build_info names beside the hive's and Python's
BUILD_LIBRARIES = ("dulwich", "psycopg")
# a counter, histogram or summary's creation time: never exported
_CREATED_SUFFIX = "_created"


class HiveRegistry(CollectorRegistry):
    """A registry that leaves out every `_created` sample of what it collects."""

    def collect(self) -> Iterable[Metric]:
        for family in super().collect():
            created = family.name + _CREATED_SUFFIX
            family.samples = [s for s in family.samples if s.name != created]
            yield family


def build_labels() -> dict[str, str]:
    """hive_build_info's labels: the hive's version, Python's, and each library's."""
    labels = {"version": __version__, "python": platform.python_version()}
    for name in BUILD_LIBRARIES:
        try:
            labels[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            labels[name] = "unknown"
    return labels
