"""The GitHub client against the fake GitHub: manners (User-Agent, the token in the
header only), limits waited out, pages followed, conditional requests, errors named."""

from __future__ import annotations

import threading
import time

import pytest

from hive.forge.github.api import Repository
from hive.forge.github.client import GitHubClient, GitHubError, PermissionMissing
from hive.metrics import HiveMetrics
from hive.rules.forge_limits import MAX_TRIES, SECONDARY_FIRST_SECONDS
from tests.fakes.fake_github import RATE_LIMIT, FakeGitHub
from tests.unit.forge.conftest import TOKEN


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


def client(gh: FakeGitHub, clock: Clock | None = None, token: str = TOKEN) -> GitHubClient:
    clock = clock or Clock()
    return GitHubClient(gh.api_url, token, sleep=clock.sleep, clock=clock)


def test_every_request_carries_a_user_agent_and_the_token_only_in_its_header(github):
    github.add_issue("one", hook=False)
    repo = Repository(client(github), github.full_name)
    repo.labelled_issues("hive", None)
    repo.info()
    assert github.seen_headers
    assert all(h.get("user-agent", "").startswith("hive-forge") for h in github.seen_headers)
    assert all(h["authorization"] == f"Bearer {TOKEN}" for h in github.seen_headers)
    assert all(TOKEN not in path for _, path, _ in github.calls)


def test_a_request_without_a_user_agent_is_refused_by_the_fake_as_by_github(github):
    import urllib.error
    import urllib.request

    req = urllib.request.Request(
        github.api_url + "/repos/octo/hello",
        headers={"Authorization": f"Bearer {TOKEN}", "User-Agent": ""},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req)
    assert refused.value.code == 403


def test_a_quiet_poll_is_a_304_and_costs_no_rate_limit(github):
    github.add_issue("one", hook=False)
    repo = Repository(client(github), github.full_name)
    first = repo.labelled_issues("hive", None)
    used = github.rate_used
    again = repo.labelled_issues("hive", first.etag)
    assert first.status == 200 and again.status == 304 and again.data is None
    assert github.rate_used == used
    assert repo.client.counts.not_modified == 1
    github.add_issue("two", hook=False)
    changed = repo.labelled_issues("hive", first.etag)
    assert changed.status == 200 and len(changed.data) == 2


def test_every_page_of_a_listing_is_followed(github):
    for n in range(230):
        github.add_issue(f"issue {n}", hook=False)
    got = Repository(client(github), github.full_name).labelled_issues("hive", None)
    assert len(got.data) == 230
    assert len({i["number"] for i in got.data}) == 230
    assert len([c for c in github.calls if c[1].endswith("/issues")]) == 3


def test_a_server_error_is_sent_again(github):
    clock = Clock()
    github.fail_next(502, message="Bad Gateway", times=2)
    info = Repository(client(github, clock), github.full_name).info()
    assert info["full_name"] == github.full_name
    assert clock.slept == [1.0, 2.0]


def test_a_server_error_that_lasts_is_raised_after_the_last_try(github):
    github.fail_next(503, message="Unavailable", times=MAX_TRIES)
    with pytest.raises(GitHubError, match="503"):
        Repository(client(github), github.full_name).info()


def test_a_secondary_limit_waits_retry_after_then_a_doubling_minute(github):
    clock = Clock()
    github.fail_next(403, {"retry-after": "3"}, "You have exceeded a secondary rate limit")
    github.fail_next(429, {}, "You have exceeded a secondary rate limit", times=2)
    Repository(client(github, clock), github.full_name).info()
    assert clock.slept == [3.0, 2 * SECONDARY_FIRST_SECONDS, 4 * SECONDARY_FIRST_SECONDS]


def test_a_primary_limit_waits_for_the_reset(github):
    clock = Clock()
    reset = str(int(clock.now) + 42)
    github.fail_next(
        403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}, "API rate limit exceeded"
    )
    Repository(client(github, clock), github.full_name).info()
    assert clock.slept == [42.0]


def test_a_missing_permission_is_one_error_naming_it(github):
    github.permissions.discard("pulls:write")
    repo = Repository(client(github), github.full_name)
    with pytest.raises(PermissionMissing) as missing:
        repo.create_pull("t", "queen-1", "main", "b")
    assert "pull_requests=write" in str(missing.value)
    assert TOKEN not in str(missing.value)


def test_a_bad_token_is_an_error_without_the_token(github):
    with pytest.raises(GitHubError) as bad:
        Repository(client(github, token="wrong-token-value"), github.full_name).info()
    assert "401" in str(bad.value) and "wrong-token-value" not in str(bad.value)
    assert "wrong-token-value" not in repr(client(github, token="wrong-token-value"))


def test_an_unreachable_github_is_one_line(github):
    lost = GitHubClient("http://127.0.0.1:9", TOKEN, sleep=lambda s: None)
    with pytest.raises(GitHubError, match="unreachable"):
        Repository(lost, "octo/hello").info()


def test_check_runs_and_statuses_are_read_newest_first(github):
    sha = github.base_sha()
    github.set_check(sha, "unit", "failure", "1 failed", hook=False)
    github.set_check(sha, "unit", "success", "all passed", hook=False)
    github.set_check(sha, "lint", None, hook=False)
    github.set_status(sha, "ci/legacy", "pending")
    github.set_status(sha, "ci/legacy", "error", "exploded")
    facts = {c.name: c for c in Repository(client(github), github.full_name).checks(sha)}
    assert facts["unit"].state == "pass" and "all passed" in facts["unit"].summary
    assert facts["lint"].state == "pending"
    assert facts["ci/legacy"].state == "fail" and facts["ci/legacy"].summary == "exploded"


def test_a_link_to_another_host_is_not_followed(github):
    for n in range(120):
        github.add_issue(f"issue {n}", hook=False)
    github.link_base = "http://127.0.0.1:9"  # the token must go nowhere else
    got = Repository(client(github), github.full_name).labelled_issues("hive", None)
    assert len(got.data) == 100


def counted(metrics: HiveMetrics) -> dict[tuple[str, str], float]:
    """hive_github_requests_total by (method, status), the pairs counted at least once."""
    samples = metrics.registry.collect()
    return {
        (s.labels["method"], s.labels["status"]): s.value
        for family in samples
        if family.name == "hive_github_requests"
        for s in family.samples
        if s.name == "hive_github_requests_total" and s.value
    }


def retries(metrics: HiveMetrics, reason: str) -> float | None:
    return metrics.registry.get_sample_value("hive_github_retries_total", {"reason": reason})


def test_requests_are_counted_by_method_and_status_and_the_limit_left_is_github_s(github):
    metrics = HiveMetrics()
    clock = Clock()
    gh = GitHubClient(
        github.api_url, TOKEN, sleep=clock.sleep, clock=clock, metrics=metrics.github()
    )
    github.add_issue("one", hook=False)
    repo = Repository(gh, github.full_name)
    first = repo.labelled_issues("hive", None)
    repo.labelled_issues("hive", first.etag)  # a 304
    repo.close_issue(repo.open_issue("two", "body", ["hive"]))
    with pytest.raises(GitHubError):
        repo.issue(404_404)
    assert counted(metrics) == {
        ("GET", "2xx"): 1,
        ("GET", "304"): 1,
        ("POST", "2xx"): 1,
        ("PATCH", "2xx"): 1,
        ("GET", "4xx"): 1,
    }
    left = metrics.registry.get_sample_value("hive_github_rate_limit_remaining")
    assert left == github.remaining and left < RATE_LIMIT
    # the labels are the closed sets: no path, no issue number
    families = {f.name: f for f in metrics.registry.collect()}
    assert {tuple(s.labels) for s in families["hive_github_requests"].samples} == {
        ("method", "status")
    }


def test_a_server_error_sent_again_counts_a_retry_and_each_answer(github):
    metrics = HiveMetrics()
    clock = Clock()
    gh = GitHubClient(
        github.api_url, TOKEN, sleep=clock.sleep, clock=clock, metrics=metrics.github()
    )
    github.fail_next(502, message="Bad Gateway", times=2)
    Repository(gh, github.full_name).info()
    assert retries(metrics, "server_error") == 2
    assert retries(metrics, "rate_limit") == retries(metrics, "secondary_rate_limit") == 0
    assert counted(metrics) == {("GET", "5xx"): 2, ("GET", "2xx"): 1}


def test_rate_limits_waited_out_count_their_reason_and_the_limit_left_follows(github):
    metrics = HiveMetrics()
    clock = Clock()
    gh = GitHubClient(
        github.api_url, TOKEN, sleep=clock.sleep, clock=clock, metrics=metrics.github()
    )
    reset = str(int(clock.now) + 42)
    github.fail_next(
        403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}, "API rate limit exceeded"
    )
    github.fail_next(429, {"retry-after": "3"}, "You have exceeded a secondary rate limit")
    repo = Repository(gh, github.full_name)
    repo.info()
    assert retries(metrics, "rate_limit") == 1
    assert retries(metrics, "secondary_rate_limit") == 1
    assert counted(metrics) == {("GET", "4xx"): 2, ("GET", "2xx"): 1}
    assert metrics.registry.get_sample_value("hive_github_rate_limit_remaining") == (
        github.remaining
    )


def test_a_request_that_finds_no_github_is_counted_unreachable():
    metrics = HiveMetrics()
    lost = GitHubClient("http://127.0.0.1:9", TOKEN, sleep=lambda s: None, metrics=metrics.github())
    with pytest.raises(GitHubError):
        Repository(lost, "octo/hello").info()
    assert counted(metrics) == {("GET", "unreachable"): 1}
    assert metrics.registry.get_sample_value("hive_github_rate_limit_remaining") is None


def test_the_forge_built_from_the_settings_counts_on_the_process_s_metrics(github, tmp_path):
    from dulwich.repo import Repo

    from hive.forge.github.wiring import GitHubForge
    from hive.git.repo import Checkout
    from hive.settings import Settings

    settings = Settings.from_env(
        {
            "HIVE_FORGE": "github",
            "HIVE_GITHUB_REPO": github.full_name,
            "HIVE_GITHUB_TOKEN": TOKEN,
            "HIVE_GITHUB_API_URL": github.api_url,
        }
    )
    checkout = Checkout(Repo(str(github.repo_path)), tmp_path, "main", github.base_sha())
    metrics = HiveMetrics()
    forge = GitHubForge.from_settings(settings, None, checkout, metrics=metrics)
    forge.repo.info()
    assert counted(metrics) == {("GET", "2xx"): 1}
    bare = GitHubForge.from_settings(settings, None, checkout)  # no metrics: counts nothing
    bare.repo.info()
    assert counted(metrics) == {("GET", "2xx"): 1}


@pytest.mark.parametrize(
    ("status", "headers", "message", "other_held"),
    [
        (403, {"retry-after": "30"}, "You have exceeded a secondary rate limit", [30.0]),
        (429, {"retry-after": "30"}, "You have exceeded a secondary rate limit", [30.0]),
        (502, {}, "Bad Gateway", []),  # GitHub's trouble with that request alone
    ],
)
def test_a_rate_limit_met_by_one_request_holds_the_clients_other_requests(
    github, status, headers, message, other_held
):
    """Publish jobs run side by side (issue 27): a rate limit one job's request met holds
    the others' requests too (they kept sending while it lasted, and GitHub prolongs a
    secondary limit for every request sent into it)."""
    clock = Clock()
    others: list[float] = []
    meanwhile: list[bool] = []

    def sleep(seconds: float) -> None:
        if meanwhile:  # the other request's own wait
            others.append(seconds)
            clock.now += seconds
            return
        meanwhile.append(True)
        repo.info()  # another thread's request, sent while the first one waits
        clock.now += seconds

    repo = Repository(
        GitHubClient(github.api_url, TOKEN, sleep=sleep, clock=clock), github.full_name
    )
    github.fail_next(status, headers, message)
    assert repo.info()["full_name"] == github.full_name
    assert meanwhile == [True] and others == other_held


def test_requests_from_many_threads_go_on_the_wire_one_at_a_time(github):
    """GitHub: "make requests serially instead of concurrently". The publish jobs side by
    side sent theirs at once, and the 300-issue chaos run's fake GitHub held 600 of them
    waiting, every request timing out for ten minutes."""
    in_flight = [0]
    most = [0]
    lock = threading.Lock()

    class Counting(GitHubClient):
        def _send(self, *args, **kwargs):  # the real request, counted while on the wire
            with lock:
                in_flight[0] += 1
                most[0] = max(most[0], in_flight[0])
            try:
                time.sleep(0.05)  # a request takes a while on the wire
                return super()._send(*args, **kwargs)
            finally:
                with lock:
                    in_flight[0] -= 1

    repo = Repository(Counting(github.api_url, TOKEN), github.full_name)
    threads = [threading.Thread(target=repo.info) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert most[0] == 1
    assert repo.client.counts.requests == 6
