from __future__ import annotations

from hive.git.native import missing_extensions


def test_dulwich_runs_on_its_compiled_extensions() -> None:
    assert missing_extensions() == []
