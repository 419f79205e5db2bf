"""One module per `hive` verb: `register(subparsers)` adds its parser and sets `func`."""

from __future__ import annotations

import importlib
from types import ModuleType


def import_if_present(name: str) -> ModuleType | None:
    """The module `name`, or None when that module itself does not exist (a verb or a
    benchmark that has not landed is simply not offered); an import failing inside it
    is raised."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        return None
