import uuid

import psycopg
import pytest

from hive.errors import HiveError
from hive.store import scratch


def _databases(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()}


def test_a_scratch_database_is_migrated_while_used_and_gone_afterwards(hive_pg_url):
    with scratch.database(hive_pg_url, prefix="hive_t_scratch") as url:
        name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
        assert name in _databases(hive_pg_url)
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM hive.queen_dispatch").fetchone() == (0,)
    assert name not in _databases(hive_pg_url)


def test_a_database_made_from_a_template_has_its_tables_and_drop_is_safe_twice(hive_pg_url):
    template, copy = (f"hive_t_{uuid.uuid4().hex[:12]}" for _ in range(2))
    made = scratch.create(hive_pg_url, template, refused="the test needs it")
    with psycopg.connect(made, autocommit=True) as conn:
        conn.execute("CREATE TABLE marker (x int)")
    try:
        url = scratch.create(hive_pg_url, copy, template=template, refused="the test needs it")
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM marker").fetchone() == (0,)
    finally:
        scratch.drop(hive_pg_url, copy)
        scratch.drop(hive_pg_url, copy)  # already gone: nothing to do
        scratch.drop(hive_pg_url, template)
    assert not {template, copy} & _databases(hive_pg_url)


def test_a_user_without_createdb_gets_one_sentence_naming_the_database(hive_pg_url):
    role = f"hive_t_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(hive_pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw' NOCREATEDB")
    try:
        as_role = psycopg.conninfo.make_conninfo(hive_pg_url, user=role, password="pw")
        with pytest.raises(HiveError, match="database hive_t_nope: grant it"):
            scratch.create(as_role, "hive_t_nope", refused="grant it")
        assert "hive_t_nope" not in _databases(hive_pg_url)
    finally:
        with psycopg.connect(hive_pg_url, autocommit=True) as conn:
            conn.execute(f"DROP ROLE {role}")
