"""`hive.commands.import_if_present`: an absent verb or benchmark is not offered, but a
module that is there and fails to import is an error, not a silently missing verb."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.commands import import_if_present


def test_a_present_module_is_imported() -> None:
    module = import_if_present("hive.commands.drain_plan")
    assert module is not None and hasattr(module, "register")


def test_an_absent_module_is_none() -> None:
    assert import_if_present("hive.commands.no_such_verb") is None


def test_a_module_whose_own_import_fails_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_verb_for_test.py").write_text("import no_such_dependency_for_test\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_for_test"):
        import_if_present("broken_verb_for_test")
