"""The GitHub forge's parts, built once from the settings (HIVE_FORGE=github): the
client, the repository, the poll, the watch, the webhook's handler and the publish
steps, sharing one client (one count of requests, one pace under the rate limit); given
the process's metrics, the client counts its requests on them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hive.errors import HiveError
from hive.forge.github.api import Repository
from hive.forge.github.client import GitHubClient, GitHubError
from hive.forge.github.hooks import Hooks
from hive.forge.github.intake import Intake, SyncResult
from hive.forge.github.publish import GitHubPublishConfig, GitHubSteps
from hive.forge.github.watch import Watch
from hive.git.auth import GitAuth
from hive.git.facts import BaseFacts, base_facts
from hive.git.repo import Checkout, GitError, own_repo, resolve
from hive.metrics import HiveMetrics
from hive.rules.credits import payer
from hive.rules.modes import ForgeMode, PublishMode
from hive.rules.shape import shape_problem
from hive.settings import Settings
from hive.store import credits
from hive.store.issues import Issue

# the fallback look at a parked pull request: the poll's interval, at least a second
MIN_RECHECK_SECONDS = 1


def git_auth(settings: Settings) -> GitAuth | None:
    """The credentials every fetch, clone and push of this process carries to the
    forge's git host (a private repository), or None without HIVE_FORGE=github."""
    if settings.forge != ForgeMode.GITHUB or not settings.github_token:
        return None
    return GitAuth(settings.github_api_url, settings.github_token)


class BaseShape:
    """The shape rule's reason for an issue against the base as the Queen's clone holds
    it (`origin/<base>`), its tree read once per base sha; None while there is no base."""

    def __init__(self, checkout: Checkout, base: str) -> None:
        self.checkout = checkout
        self.base = base
        self._facts: BaseFacts | None = None

    def __call__(self, issue: Issue) -> str | None:
        try:
            with own_repo(self.checkout) as repo:
                sha = resolve(repo, f"refs/remotes/origin/{self.base}")
                if self._facts is None or self._facts.sha != sha:
                    self._facts = base_facts(repo, sha)
        except GitError:
            return None
        f = self._facts
        return shape_problem(issue.labels, issue.boundary, issue.body, f.files, f.dirs, f.symlinks)


class AccountOf:
    """An issue's paying account and that account's balance now (the watch's credit
    comment)."""

    def __init__(self, db: Any, default: str) -> None:
        self.db = db
        self.default = default

    def __call__(self, issue: Issue) -> tuple[str, int]:
        account = payer(issue.account, self.default)
        return account, credits.book(self.db, account, datetime.now(UTC)).balance


@dataclass
class GitHubForge:
    client: GitHubClient
    repo: Repository
    intake: Intake
    watch: Watch
    hooks: Hooks | None
    steps: GitHubSteps
    poll_seconds: float

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        db: Any,
        checkout: Checkout,
        *,
        issues_changed: Callable[[], object] = lambda: None,
        jobs_ready: Callable[[], object] = lambda: None,
        metrics: HiveMetrics | None = None,
    ) -> GitHubForge:
        if settings.forge != ForgeMode.GITHUB or not settings.github_token:
            raise HiveError("the GitHub forge needs HIVE_FORGE=github and HIVE_GITHUB_TOKEN")
        client = GitHubClient(
            settings.github_api_url,
            settings.github_token,
            timeout_seconds=settings.github_timeout_seconds,
            metrics=None if metrics is None else metrics.github(),
        )
        repo = Repository(client, settings.github_repo)
        watch = Watch(
            db,
            repo,
            settings.github_label,
            shape=BaseShape(checkout, settings.base_ref),
            closes_pushed_merges=settings.publish == PublishMode.PUSH,
            credit=AccountOf(db, settings.credit_default_account) if settings.credits else None,
        )

        def refused(result: SyncResult) -> None:
            try:
                watch.unshaped(result.number, result.reason)
            except GitHubError as err:
                import logging

                logging.getLogger("hive.forge").warning("#%d: %s", result.number, err)

        intake = Intake(db, repo, settings.github_label, on_refused=refused)
        hooks = None
        if settings.github_webhook_secret:
            hooks = Hooks(
                db,
                secret=settings.github_webhook_secret,
                full_name=settings.github_repo,
                label=settings.github_label,
                issues_changed=issues_changed,
                jobs_ready=jobs_ready,
                on_refused=refused,
            )
        recheck = max(MIN_RECHECK_SECONDS, int(settings.github_poll_seconds))
        steps = GitHubSteps(
            db,
            checkout,
            repo,
            watch,
            GitHubPublishConfig(
                token=settings.github_token,
                base=settings.base_ref,
                merge_method=settings.github_merge_method,
                recheck_seconds=recheck,
                park_seconds=settings.github_park_minutes * 60,
            ),
        )
        return cls(client, repo, intake, watch, hooks, steps, settings.github_poll_seconds)
