"""The hive's secrets, planted where a hostile turn will look for them."""

from __future__ import annotations

import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def hive_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Everything a hive keeps that a turn must not reach, each holding the marker."""
    secret = f"hive-secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("HIVE_DATABASE_URL", f"postgresql://hive:{secret}@db/hive")
    home = tmp_path / "hive-home"
    home.mkdir()
    (home / ".git-credentials").write_text(f"https://x:{secret}@github.com\n")
    monkeypatch.setenv("HOME", str(home))
    workdir = tmp_path / "work"
    other = workdir / "queen-2"
    other.mkdir(parents=True)
    (other / "secret.txt").write_text(secret)
    (workdir / "turn-groups").mkdir()
    (workdir / "turn-groups" / "record").write_text(secret)
    pg = tmp_path / "pg"
    pg.mkdir()
    (pg / "PG_VERSION").write_text(secret)
    db_socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    db_socket.bind(str(pg / ".s.PGSQL.5432"))
    db_socket.listen()
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract_name = f"hive-test-{uuid.uuid4().hex}"
    abstract.bind("\0" + abstract_name)
    abstract.listen()
    other_brief = Path(tempfile.mkdtemp(prefix="hive-brief-"))
    (other_brief / "brief.md").write_text(secret)
    tmp_file = Path(tempfile.mkdtemp(prefix="hive-")) / "state"
    tmp_file.write_text(secret)
    yield {
        "secret": secret,
        "home": str(home),
        "workdir": str(workdir),
        "other_secret_file": str(other / "secret.txt"),
        "other_brief": str(other_brief / "brief.md"),
        "record": str(workdir / "turn-groups" / "record"),
        "db_socket": str(pg / ".s.PGSQL.5432"),
        "db_file": str(pg / "PG_VERSION"),
        "tmp_secret": str(tmp_file),
        "abstract_socket": "\0" + abstract_name,
    }
    db_socket.close()
    abstract.close()
    for path in (other_brief / "brief.md", tmp_file):
        path.unlink()
    other_brief.rmdir()
    tmp_file.parent.rmdir()
