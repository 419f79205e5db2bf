"""`hive chaos --loop --forge github`: the same loop against the fake GitHub of the
hive's tests (tests/fakes/fake_github.py, started here on 127.0.0.1), the Queen reading
its issues (webhooks and the poll) and publishing through pull requests. GitHub
misbehaves on the seeded plan (`github_plan`): 5xx answers, a secondary rate limit with
`retry-after`, answers held past the client's timeout, webhooks twice and out of order;
and a person acts on some pull requests (merges, closes, deletes the branch, merges at
another head), a required check never reports, a check never finishes, one is red once.

Three threads run beside the swarm: the person (acts on a held pull request once it is
open, then lets its check pass), the API's faults (on the schedule), and a sampler (the
open pull requests, every SAMPLE_SECONDS). At the end the invariants of
`github_checks` are read from the fake and the store; a broken one's issue history
carries what GitHub and the person did to it (`said_about`).
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import socket
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg

from hive.chaos.github_checks import (
    PullEnd,
    closed_once,
    followed_last,
    never_two_open,
    pulls_merged_once,
)
from hive.chaos.github_plan import (
    HELD,
    ApiFault,
    ApiKind,
    GitHubPlan,
    PullEvent,
    ci_answer,
    make_github_plan,
)
from hive.chaos.invariants import Check
from hive.chaos.loop import IssueEnd
from hive.chaos.plan import Shape
from hive.errors import HiveError
from hive.rules.branches import branch_issue, branch_name

TOKEN = "ghp_chaosTOKENthatNeverLeaves0123456789"
SECRET = "chaos-webhook-secret-0123456789"
REPO = "chaos/hive"
LABEL = "hive"
PARK_MINUTES = 0.15  # a park's bound in the run: 9 s
TIMEOUT_SECONDS = 2.0  # one API request's bound in the run; a held answer waits longer
SAMPLE_SECONDS = 1.0
HOOK_WAIT_SECONDS = 30.0
PERSON_SECONDS = 0.2
MERGED_MARK = "<!-- hive:merged -->"
SECONDARY = "You have exceeded a secondary rate limit. Please wait before you try again."


def fake_github_class() -> Any:
    """The fake GitHub of the hive's source checkout (tests/fakes), which `make chaos`
    and the tests run from."""
    try:
        return importlib.import_module("tests.fakes.fake_github").FakeGitHub
    except ImportError:
        pass
    path = Path(__file__).resolve().parents[2] / "tests" / "fakes" / "fake_github.py"
    if not path.is_file():
        raise HiveError(
            "hive chaos --forge github runs the fake GitHub of the hive's source checkout "
            f"(tests/fakes/fake_github.py), which is not at {path}: run it from a checkout"
        )
    spec = importlib.util.spec_from_file_location("hive_chaos_fake_github", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.FakeGitHub


SMALL_FAULT_SECONDS = 30.0  # a run whose faults fall in this window or less is small


def small_shape(shape: Shape) -> Shape:
    """`make test`'s run: GitHub's faults, with a Queen killed and PostgreSQL restarted
    (the loop's own small run has the rest), over a shorter window."""
    return replace(
        shape,
        fault_seconds=10.0,
        runner_kills=0,
        runner_terms=0,
        queen_terms=0,
        stalls=0,
        queen_kills_publishing=0,
        queen_kills_reviewing=0,
        postgres_restarts_publishing=0,
        person_pushes=0,
    )


def issue_body(n: int, path: str) -> str:
    return (
        f"A line in {path}.\n\n## Boundary\n- {path}\n\n"
        f"## Criteria\n- file `{path}` contains `chaos {n} turn`\n"
    )


class GitHubSide:
    """The fake GitHub and the three threads (see the module)."""

    def __init__(self, issues: list[int], seed: int, fault_seconds: float, *, big: bool) -> None:
        per_event = max(1, len(issues) // 40) if big else 1
        per_fault = max(2, int(fault_seconds // 20)) if big else 2
        self.issues = issues
        self.seed = seed
        self.plan: GitHubPlan = make_github_plan(issues, seed, fault_seconds, per_event, per_fault)
        self.gh: Any = None
        self.lines: list[str] = []  # what was done, one line each, with its time
        self.began = time.monotonic()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._ci_seen: set[int] = set()
        self._held: dict[int, str] = {}  # issue -> the head whose check is held running
        self._by_person: set[int] = set()  # pull requests a person merged
        self._newer: dict[int, str] = {}  # each issue edited twice: its newer title
        self._older: dict[int, str] = {}
        self.most_open: dict[int, int] = {}
        self.samples = 0

    # ---- set-up ------------------------------------------------------------------

    def open(self, upstream: Path) -> None:
        self.gh = fake_github_class()(upstream, token=TOKEN, full_name=REPO, base="main")
        self.gh.__enter__()
        self.gh.hook_secret = SECRET
        self.gh.unreachable_ok = True  # a Queen down: GitHub's delivery fails, no more
        self.gh.ci = self._ci
        for n, event in self.plan.events.items():
            if event == PullEvent.NEVER_REPORTS:
                self.gh.block_heads[branch_name(n)] = "protected"

    def add_issues(self, paths: dict[int, str], account: str, labels: dict[int, str]) -> None:
        """One labelled issue per plan's issue (with its priority label), numbered as the
        plan (the hook is not registered yet: the Queen's first poll reads them)."""
        for n in sorted(paths):
            names = [LABEL, *([labels[n]] if n in labels else [])]
            made = self.gh.add_issue(f"chaos {n}", issue_body(n, paths[n]), names, hook=False)
            if made != n:
                raise HiveError(f"the fake GitHub numbered issue {n} as {made}")
            self.gh.state.issues[n]["user"]["login"] = account  # its credit account

    def env(self, role: str) -> dict[str, str]:
        env = {
            "HIVE_FORGE": "github",
            "HIVE_PUBLISH": "github",
            "HIVE_GITHUB_REPO": REPO,
            "HIVE_GITHUB_TOKEN": TOKEN,
            "HIVE_GITHUB_API_URL": self.gh.api_url,
            "HIVE_GITHUB_WEBHOOK_SECRET": SECRET,
            "HIVE_GITHUB_POLL_SECONDS": "2",
            "HIVE_GITHUB_PARK_MINUTES": str(PARK_MINUTES),
            "HIVE_GITHUB_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS),
            "HIVE_JOB_CLAIM_SECONDS": "5",
        }
        if role == "queen":
            # each Queen on a port of her own, and GitHub's hook follows the newest
            port = _free_port()
            env["HIVE_HTTP_ADDR"] = f"127.0.0.1:{port}"
            self.gh.hook_url = f"http://127.0.0.1:{port}/hooks/github"
        return env

    # ---- the threads -------------------------------------------------------------

    def start(self, began: float) -> None:
        self.began = began
        for name, target in (
            ("person", self._person),
            ("api-faults", self._faults),
            ("sampler", self._sampler),
        ):
            thread = threading.Thread(target=target, name=f"chaos-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def faults_struck(self) -> None:
        """Returns once every planned API fault has struck: a run whose issues all
        ended first would end without them, testing less than it says."""
        for thread in self._threads:
            if thread.name == "chaos-api-faults":
                thread.join()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        said = git_failures(getattr(self.gh, "git_errors", []))
        if said is not None:
            self._say(said)

    def close(self) -> None:
        self._stop.set()
        if self.gh is not None:
            self.gh.__exit__(None, None, None)

    def _say(self, line: str) -> None:
        with self._lock:
            self.lines.append(f"{time.monotonic() - self.began:6.1f} s  {line}")

    def _ci(self, branch: str, sha: str) -> list[tuple[str, str | None, str]]:
        n = int(branch.removeprefix("queen-"))
        event = self.plan.events.get(n)
        with self._lock:
            first = n not in self._ci_seen
            self._ci_seen.add(n)
            if event in HELD and first:
                self._held[n] = sha
        conclusion, summary = ci_answer(event, first)
        return [("ci", conclusion, summary)]

    def _person(self) -> None:
        while not self._stop.wait(PERSON_SECONDS):
            with self._lock:
                held = dict(self._held)
            for n, sha in sorted(held.items()):
                pr = self._open_pull(n)
                if pr is None:
                    continue
                with self._lock:
                    del self._held[n]
                self._act_on(n, pr, sha, self.plan.events[n])

    def _open_pull(self, n: int) -> int | None:
        with self.gh.lock:
            for number, pr in self.gh.state.pulls.items():
                if pr["head_ref"] == branch_name(n) and pr["state"] == "open":
                    return int(number)
        return None

    def _act_on(self, n: int, pr: int, sha: str, event: PullEvent) -> None:
        branch = branch_name(n)
        try:
            if event == PullEvent.PERSON_CLOSES:
                self.gh.person_closes(pr)
            elif event == PullEvent.HEAD_DELETED:
                self.gh.delete_branch(branch)
            else:
                if event == PullEvent.FOREIGN_MERGE:
                    self.gh.person_commits(branch, f"person/{n}.txt", f"a person on #{n}\n")
                self.gh.person_merges(pr)
                self._by_person.add(pr)
            done = f"#{n}: pull request #{pr} {event.value}"
        except Exception as err:  # a merge that conflicts: said, and the check goes on
            done = f"#{n}: pull request #{pr} could not be {event.value}: {err!r}"
        self.gh.set_check(sha, "ci", "success", "chaos: green")
        self._say(done + "; its check passes")

    def _faults(self) -> None:
        for fault in self.plan.faults:
            if self._stop.wait(max(0.0, self.began + fault.at_seconds - time.monotonic())):
                return
            self._say(self._api_fault(fault))

    def _api_fault(self, fault: ApiFault) -> str:
        if fault.kind == ApiKind.SERVER_ERRORS:
            self.gh.fail_next(502, message="Server Error", times=2)
            return "the next 2 API answers are 502"
        if fault.kind == ApiKind.SECONDARY_LIMIT:
            self.gh.fail_next(403, {"retry-after": "1"}, SECONDARY)
            return "the next API answer is a secondary rate limit, retry-after 1"
        if fault.kind == ApiKind.TIMEOUT:
            self.gh.delay_next(TIMEOUT_SECONDS + 1.5)
            return f"the next API answer is held {TIMEOUT_SECONDS + 1.5:.1f} s (done, unheard)"
        return self._webhooks(fault.issue)

    def _webhooks(self, n: int) -> str:
        """Issue `n` edited twice; its webhooks come newest first, then the older, then
        the newest again (a redelivery, the same X-GitHub-Delivery). A Queen just
        replaced is waited for (HOOK_WAIT_SECONDS at most): a delivery nobody hears
        tests nothing."""
        waited = time.monotonic() + HOOK_WAIT_SECONDS
        while self.gh.deliver("ping", {"zen": "chaos"}) == 0 and time.monotonic() < waited:
            if self._stop.wait(0.5):
                break
        n = self._open_issue(n)
        self.gh.edit_issue(n, title=f"chaos {n} (edited once)", hook=False)
        older = copy.deepcopy(self.gh.state.issues[n])
        self._stop.wait(1.1)  # GitHub's updated_at is in whole seconds
        self.gh.edit_issue(n, title=f"chaos {n} (edited twice)", hook=False)
        newer = copy.deepcopy(self.gh.state.issues[n])
        said = [
            self.gh.deliver("issues", {"action": "edited", "issue": newer}, delivery=f"c{n}-2"),
            self.gh.deliver("issues", {"action": "edited", "issue": older}, delivery=f"c{n}-1"),
            self.gh.deliver("issues", {"action": "edited", "issue": newer}, delivery=f"c{n}-2"),
        ]
        self._older[n], self._newer[n] = str(older["title"]), str(newer["title"])
        return f"#{n}: edited twice; webhooks newest, older, newest again answered {said}"

    def _open_issue(self, n: int) -> int:
        """`n`, or the next issue still open on GitHub (an edit of a closed issue is
        not followed, by design), or `n` when none is."""
        with self.gh.lock:
            ring = sorted(self.issues)
            at = ring.index(n) if n in ring else 0
            for k in ring[at:] + ring[:at]:
                if self.gh.state.issues[k]["state"] == "open" and k not in self._newer:
                    return k
        return n

    def _sampler(self) -> None:
        """The most open pull requests each issue had at once, every SAMPLE_SECONDS."""
        while not self._stop.wait(SAMPLE_SECONDS):
            self.samples += 1
            with self.gh.lock:
                open_now: dict[int, int] = {}
                for pr in self.gh.state.pulls.values():
                    k = branch_issue(pr["head_ref"])
                    if pr["state"] == "open" and k is not None:
                        open_now[k] = open_now.get(k, 0) + 1
            for k, count in open_now.items():
                self.most_open[k] = max(self.most_open.get(k, 0), count)

    # ---- the end -----------------------------------------------------------------

    def checks(self, db: psycopg.Connection[Any], ends: list[IssueEnd]) -> tuple[Check, ...]:
        merged = {e.issue: e.merged_sha for e in ends if e.closed and e.merged_sha}
        escalated = [e.issue for e in ends if e.escalated_note is not None]
        foreign = [n for n, e in self.plan.events.items() if e == PullEvent.FOREIGN_MERGE]
        with self.gh.lock:
            pulls = [
                PullEnd(
                    int(number),
                    int(pr["head_ref"].removeprefix("queen-")),
                    bool(pr["merged"]),
                    pr["merge_commit_sha"],
                    int(number) in self._by_person,
                )
                for number, pr in self.gh.state.pulls.items()
            ]
            comments: dict[int, int] = {}
            for comment in self.gh.state.comments.values():
                if MERGED_MARK in comment["body"]:
                    comments[comment["issue"]] = comments.get(comment["issue"], 0) + 1
            closes = list(self.gh.closed_issues)
        store = dict(db.execute("SELECT number, title FROM hive.queen_issue").fetchall())
        merges = pulls_merged_once(merged, escalated, pulls, foreign)
        return (
            replace(merges, measured=f"{merges.measured}; {self.measured()}"),
            never_two_open(self.most_open, self.samples),
            closed_once(sorted(merged), closes, comments),
            followed_last(store, self._newer, self._older),
        )

    def said_about(self, n: int) -> tuple[str, ...]:
        """What GitHub and the person did to issue `n`, for its history."""
        event = self.plan.events.get(n)
        first = () if event is None else (f"GitHub: its pull request's event: {event.value}",)
        return (*first, *(f"GitHub: {line.strip()}" for line in self.lines if f"#{n}:" in line))

    def measured(self) -> str:
        """What GitHub did on the way: the pull requests' events, the API's faults,
        the requests it answered."""
        acted = sum(1 for line in self.lines if "its check passes" in line)
        calls = len(self.gh.calls) if self.gh is not None else 0
        return (
            f"{len(self.plan.events)} pull request events ({acted} acted on by a person), "
            f"{len(self.plan.faults)} API faults, {calls} API requests"
        )


def git_failures(errors: list[str]) -> str | None:
    """One line naming how many pushes and fetches the fake's git endpoint failed and
    what the first raised (a 500 is the fake's own defect, not one of the plan's
    faults); None when it failed none. `errors` are the fake's `git_errors`."""
    if not errors:
        return None
    pushes = sum(1 for e in errors if "/git-receive-pack:" in e)
    return (
        f"the fake GitHub's git endpoint failed {_count(pushes, 'push', 'pushes')} and "
        f"{_count(len(errors) - pushes, 'fetch', 'fetches')} (500); first: {errors[0]}"
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
