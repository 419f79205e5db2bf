"""The hive's SQL, named and in one place (procrastinate's `queries.sql`).

Every `.sql` file under `queries/` holds queries of the form

    -- name: claim_order
    -- One line saying what it does.
    UPDATE ...;

`QUERIES[name].text` is the statement; nothing in Python assembles SQL from strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

_HEADER = re.compile(r"^-- name: (?P<name>[a-z_][a-z0-9_]*)\n-- (?P<doc>[^\n]+)\n", re.MULTILINE)


@dataclass(frozen=True)
class Query:
    name: str
    doc: str
    text: str
    family: str  # the file it lives in, without `.sql`


def _parse(family: str, source: str) -> list[Query]:
    heads = list(_HEADER.finditer(source))
    found = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(source)
        body = source[head.end() : end].strip()
        if not body:
            raise ValueError(f"query {head['name']} in {family}.sql has no statement")
        found.append(Query(head["name"], head["doc"].strip(), body, family))
    return found


def _load() -> dict[str, Query]:
    catalogue: dict[str, Query] = {}
    folder = resources.files("hive.store") / "queries"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        for query in _parse(entry.name.removesuffix(".sql"), entry.read_text("utf-8")):
            if query.name in catalogue:
                raise ValueError(f"query {query.name} is named twice")
            catalogue[query.name] = query
    return catalogue


QUERIES: dict[str, Query] = _load()


def q(name: str) -> str:
    """The text of the named query (a KeyError names a query that does not exist)."""
    return QUERIES[name].text
