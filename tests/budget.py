"""The connections a process holds, as PostgreSQL itself counts them: the rows of
`pg_stat_activity` under the process's application name (`hive-<runner name>`)."""

from __future__ import annotations

from typing import Any

import psycopg


def held(db: psycopg.Connection[Any], application_name: str) -> tuple[int, int]:
    """(connections, LISTEN connections) under `application_name`. A LISTEN connection's
    last statement is a LISTEN or, once a board stopped listening, an UNLISTEN."""
    row = db.execute(
        "SELECT count(*), count(*) FILTER (WHERE query ILIKE '%%LISTEN %%')"
        " FROM pg_stat_activity WHERE application_name = %s",
        (application_name,),
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def most_held(db: psycopg.Connection[Any], application_name: str, samples: int) -> int:
    """The most connections held over `samples` looks (each a round trip)."""
    return max(held(db, application_name)[0] for _ in range(samples))
