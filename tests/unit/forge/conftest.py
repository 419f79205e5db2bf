from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.fake_github import FakeGitHub
from tests.fakes.origin import make_origin

TOKEN = "ghp_fakeTOKENthatMustNeverLeak0123456789"


@pytest.fixture
def github(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(make_origin(tmp_path / "origin.git"), token=TOKEN) as gh:
        yield gh
