"""Restart strategies: which siblings go down and come back with a child that exited.

Pure: given the children in start order and the one that exited, name the ones to stop
(in reverse start order) and to start again (in start order). The supervisor acts on it.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass


class Strategy(enum.Enum):
    ONE_FOR_ONE = "one_for_one"  # only the child that exited
    ONE_FOR_ALL = "one_for_all"  # every child
    REST_FOR_ONE = "rest_for_one"  # the child and every child started after it
    SIMPLE_ONE_FOR_ONE = "simple_one_for_one"  # a pool: like one_for_one, one template


@dataclass(frozen=True)
class Plan:
    stop: tuple[str, ...]  # siblings to stop, in this order (reverse start order)
    start: tuple[str, ...]  # children to start again, in this order (start order)


def plan(strategy: Strategy, order: Sequence[str], exited: str) -> Plan:
    """The restart plan when ``exited`` (one of ``order``) must be restarted."""
    if exited not in order:
        raise ValueError(f"{exited!r} is not a child")
    if strategy in (Strategy.ONE_FOR_ONE, Strategy.SIMPLE_ONE_FOR_ONE):
        group = [exited]
    elif strategy is Strategy.ONE_FOR_ALL:
        group = list(order)
    else:
        group = list(order[order.index(exited) :])
    siblings = [child for child in group if child != exited]
    return Plan(stop=tuple(reversed(siblings)), start=tuple(group))
