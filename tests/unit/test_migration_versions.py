"""Two migrations never share a version: the second would be skipped as applied (two
branches that each add the next number land one after the other)."""

from hive.store import migrate


def test_every_migration_has_a_version_of_its_own() -> None:
    versions = [m.version for m in migrate.migrations()]
    assert len(versions) == len(set(versions)), versions
    assert versions == list(range(1, len(versions) + 1))
