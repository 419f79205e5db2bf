"""The fake GitHub serving the sample repository, and the forge's parts bound to it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hive.forge.github.api import Repository
from hive.forge.github.client import GitHubClient
from hive.forge.github.intake import Intake
from hive.forge.github.publish import GitHubPublishConfig, GitHubSteps
from hive.forge.github.watch import Watch
from hive.git.repo import Checkout
from tests.fakes.fake_github import FakeGitHub
from tests.live.review.conftest import db, finished_work, queen_checkout  # noqa: F401

TOKEN = "ghp_liveTOKENthatMustNeverLeak9876543210"


@pytest.fixture
def github(hive_repo: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(hive_repo, token=TOKEN) as gh:
        yield gh


@dataclass
class Forge:
    client: GitHubClient
    repo: Repository
    watch: Watch
    intake: Intake
    steps: GitHubSteps


@pytest.fixture
def forge(github: FakeGitHub, db: Any, queen_checkout: Checkout) -> Forge:  # noqa: F811
    client = GitHubClient(github.api_url, TOKEN, sleep=lambda s: None)
    repo = Repository(client, github.full_name)
    watch = Watch(db, repo, "hive")
    intake = Intake(db, repo, "hive")
    config = GitHubPublishConfig(token=TOKEN, base="main", recheck_seconds=60)
    return Forge(client, repo, watch, intake, GitHubSteps(db, queen_checkout, repo, watch, config))
