"""The publish job on a real PostgreSQL and real git: accepted work is checked, gated,
merged with dulwich and pushed to the repository, and its issue closed; checked with the
git binary."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hive.actors.jobrunner import JobRunner, JobRunnerConfig
from hive.git.repo import Checkout, own_repo, refresh_base
from hive.jobs import engine
from hive.jobs.publish import PublishConfig, Publisher
from hive.metrics import HiveMetrics
from hive.rules.jobs import JobKind, Step
from hive.store import jobs, publish
from hive.testing import git
from tests.live.review.conftest import Finished
from tests.one_job import run_one_job

pytestmark = pytest.mark.live


def _accept(hive_db_url: str, issue: int) -> None:
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE hive.queen_dispatch SET review_state = 'accept', reviewed_at = now()"
            " WHERE issue = %s",
            (issue,),
        )


def _one(hive_db_url: str, sql: str, *args: Any) -> Any:
    with psycopg.connect(hive_db_url) as conn:
        row = conn.execute(sql, args).fetchone()
        return None if row is None else row[0]


@pytest.fixture
def publishing(
    db: Any, queen_checkout: Checkout, hive_repo: Path, hive_db_url: str
) -> Callable[..., tuple[Publisher, HiveMetrics]]:
    def make(**config: Any) -> tuple[Publisher, HiveMetrics]:
        metrics = HiveMetrics()
        cfg = PublishConfig(repo_url=str(hive_repo), base="main", **config)
        return Publisher(db, queen_checkout, metrics, cfg), metrics

    return make


def _run(db: Any, publisher: Publisher) -> engine.RunResult:
    return run_one_job(db, "test-queen", publisher.handlers(), ttl_seconds=60)


def _dies_at(db: Any, handlers: dict[str, engine.Handler], step: Step) -> None:
    """One run whose process dies at `step`; the step's own handler is put back."""
    real = handlers[step]

    def dies(ctx: engine.StepContext) -> Any:
        raise RuntimeError(f"killed at {step}")

    handlers[step] = dies
    try:
        assert run_one_job(db, "q1", handlers, ttl_seconds=0.2).errors == 1
    finally:
        handlers[step] = real


def _claim_runs_out(hive_db_url: str) -> None:
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_job SET claim_due_at = now() - interval '1 s'")


def _job(db: Any, issue: int) -> jobs.Job:
    created = jobs.create(db, JobKind.PUBLISH, issue, Step.CHECKS, attempt=1)
    return created.job


@pytest.mark.through_pgbouncer
def test_accepted_work_with_green_checks_lands_on_main_and_closes_its_issue(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    work = finished_work(1, {"docs/a.md": "hello\n"}, ["file `docs/a.md` contains `hello`"])
    _accept(hive_db_url, 1)
    job = _job(db, 1)
    publisher, metrics = publishing(checks=(("has_file", "test -f docs/a.md"),))
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    main = git("rev-parse", "main", cwd=hive_repo)
    assert git("show", "main:docs/a.md", cwd=hive_repo) == "hello"
    assert work.head_sha == main  # base had not moved: a fast-forward
    git("fsck", "--strict", cwd=hive_repo)
    assert _one(hive_db_url, "SELECT closed_reason FROM hive.queen_issue") == f"merged as {main}"
    assert _one(hive_db_url, "SELECT merged_sha FROM hive.queen_dispatch") == main
    assert metrics.registry.get_sample_value("hive_merges_total") == 1
    labels = {"check": "has_file", "result": "pass"}
    assert metrics.registry.get_sample_value("hive_checks_total", labels) == 1


def test_zero_checks_park_at_the_gate_until_a_person_approves(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    before = git("rev-parse", "main", cwd=hive_repo)
    finished_work(2, {"docs/b.md": "b\n"}, ["x"])
    _accept(hive_db_url, 2)
    job = _job(db, 2)
    publisher, _ = publishing()
    assert _run(db, publisher).parked == 1
    parked = jobs.get(db, job.id)
    assert parked is not None and parked.step == Step.GATE and parked.state == "parked"
    assert "hive approve 2" in (parked.detail or "")
    assert _run(db, publisher).claimed == 0  # parked: nobody claims it
    assert git("rev-parse", "main", cwd=hive_repo) == before
    assert publish.approve(db, 2, "ada")
    assert not publish.approve(db, 2, "ada")  # once
    assert _run(db, publisher).finished == 1
    assert git("show", "main:docs/b.md", cwd=hive_repo) == "b"


def test_a_red_check_sends_the_work_back_with_its_output_tail(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    before = git("rev-parse", "main", cwd=hive_repo)
    finished_work(3, {"docs/c.md": "c\n"}, ["x"])
    _accept(hive_db_url, 3)
    job = _job(db, 3)
    publisher, _ = publishing(checks=(("unit", "echo 'assert 1 == 2' >&2; exit 1"),))
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.SENT_BACK  # type: ignore[union-attr]
    state, note, sendbacks = (
        psycopg.connect(hive_db_url)
        .execute("SELECT review_state, review_note, sendbacks FROM hive.queen_dispatch")
        .fetchone()
    )  # type: ignore[misc]
    assert (state, sendbacks) == ("sendback", 1)
    assert note.startswith("check unit fail on ") and note.endswith("assert 1 == 2")
    assert git("rev-parse", "main", cwd=hive_repo) == before


def test_a_base_moved_under_the_branch_merges_three_ways(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    work = finished_work(4, {"docs/d.md": "d\n"}, ["x"])
    (hive_repo / "src" / "util.py").write_text("VALUE = 2\n")
    git("commit", "-qam", "someone else's change", cwd=hive_repo)
    moved = git("rev-parse", "main", cwd=hive_repo)
    _accept(hive_db_url, 4)
    _job(db, 4)
    publisher, _ = publishing(checks=(("ok", "true"),))
    assert _run(db, publisher).finished == 1
    parents = git("log", "-1", "--format=%P", "main", cwd=hive_repo).split()
    assert parents == [moved, work.head_sha]
    assert git("show", "main:src/util.py", cwd=hive_repo) == "VALUE = 2"
    assert git("show", "main:docs/d.md", cwd=hive_repo) == "d"
    git("fsck", "--strict", cwd=hive_repo)


def test_a_conflict_with_the_moved_base_sends_back_naming_the_paths(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    finished_work(5, {"docs/notes.md": "ours\n"}, ["x"])
    (hive_repo / "docs" / "notes.md").write_text("theirs\n")
    git("commit", "-qam", "a clashing change", cwd=hive_repo)
    before = git("rev-parse", "main", cwd=hive_repo)
    _accept(hive_db_url, 5)
    _job(db, 5)
    publisher, _ = publishing(checks=(("ok", "true"),))
    assert _run(db, publisher).finished == 1
    note = _one(hive_db_url, "SELECT review_note FROM hive.queen_dispatch")
    assert note.endswith("conflicts in docs/notes.md")
    assert git("rev-parse", "main", cwd=hive_repo) == before


def test_a_file_over_the_text_merge_limit_sends_back_saying_its_size(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    finished_work(6, {"docs/notes.md": "notes\nours at the end\n"}, ["x"])
    theirs = "theirs at the top\nnotes\n"  # apart from the bee's line: a clean text merge
    (hive_repo / "docs" / "notes.md").write_text(theirs)
    git("commit", "-qam", "a change away from the bee's", cwd=hive_repo)
    before = git("rev-parse", "main", cwd=hive_repo)
    _accept(hive_db_url, 6)
    _job(db, 6)
    publisher, _ = publishing(checks=(("ok", "true"),), merge_text_max_bytes=8)
    assert _run(db, publisher).finished == 1
    note = _one(hive_db_url, "SELECT review_note FROM hive.queen_dispatch")
    first, reason = note.splitlines()
    assert first.endswith("conflicts in docs/notes.md")
    assert reason == (
        f"docs/notes.md is {len(theirs)} bytes, over the 8 bytes a line-by-line merge takes "
        "(HIVE_MERGE_TEXT_MAX_BYTES)"
    )
    assert git("rev-parse", "main", cwd=hive_repo) == before


def test_work_no_longer_accepted_drops_its_job(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_db_url: str,
) -> None:
    finished_work(6, {"docs/e.md": "e\n"}, ["x"])
    job = _job(db, 6)  # never accepted
    publisher, _ = publishing()
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DROPPED  # type: ignore[union-attr]


@pytest.mark.through_pgbouncer
def test_a_restarted_publish_never_pushes_or_closes_twice(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    finished_work(7, {"docs/f.md": "f\n"}, ["x"])
    _accept(hive_db_url, 7)
    job = _job(db, 7)
    publisher, metrics = publishing(checks=(("ok", "true"),))
    handlers = publisher.handlers()
    _dies_at(db, handlers, Step.CLOSE)  # after the push landed
    pushed = git("rev-parse", "main", cwd=hive_repo)
    _claim_runs_out(hive_db_url)
    assert run_one_job(db, "q2", handlers, ttl_seconds=60).finished == 1
    assert git("rev-parse", "main", cwd=hive_repo) == pushed
    assert git("rev-list", "--count", "main", cwd=hive_repo) == "2"
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    assert metrics.registry.get_sample_value("hive_merges_total") == 1


def test_a_base_that_moves_after_the_checks_ran_is_checked_again(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    finished_work(8, {"docs/g.md": "g\n"}, ["x"])
    _accept(hive_db_url, 8)
    _job(db, 8)
    publisher, _ = publishing(checks=(("ok", "true"),))
    handlers = publisher.handlers()
    checks = handlers[Step.CHECKS]
    calls = []

    def checks_then_base_moves(ctx: engine.StepContext) -> Any:
        answer = checks(ctx)
        calls.append(answer)
        if len(calls) == 1:
            (hive_repo / "README.md").write_text("# moved\n")
            git("commit", "-qam", "moved meanwhile", cwd=hive_repo)
        return answer

    handlers[Step.CHECKS] = checks_then_base_moves
    assert run_one_job(db, "q", handlers, ttl_seconds=60).finished == 1
    assert len(calls) == 2  # the push found the new base, MERGE sent the job back to CHECKS
    merges = _one(hive_db_url, "SELECT count(DISTINCT merge_sha) FROM hive.queen_check")
    assert merges == 2
    assert git("show", "main:README.md", cwd=hive_repo) == "# moved"
    assert git("show", "main:docs/g.md", cwd=hive_repo) == "g"


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times the publish steps fetch the base and compute a merge."""
    from hive.jobs import publish as publishing

    counts = {"fetch": 0, "merge": 0, "checks_read": 0}
    places = ((publishing, "refresh_base", "fetch"), (publishing, "merge", "merge"))
    for module, name, key in (*places, (publishing.publish, "checks_on", "checks_read")):
        real = getattr(module, name)

        def counting(*args: Any, _real: Any = real, _key: str = key, **kwargs: Any) -> Any:
            counts[_key] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    return counts


def test_a_job_fetches_its_base_and_computes_its_merge_once(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = finished_work(9, {"docs/h.md": "h\n"}, ["x"])
    (hive_repo / "src" / "util.py").write_text("VALUE = 9\n")
    git("commit", "-qam", "the base moves: a real three-way merge", cwd=hive_repo)
    moved = git("rev-parse", "main", cwd=hive_repo)
    _accept(hive_db_url, 9)
    _job(db, 9)
    publisher, _ = publishing(checks=(("ok", "true"),))
    counts = _counted(monkeypatch)
    assert _run(db, publisher).finished == 1
    # CHECKS's fetch, merge and the runs it saw pass (read before and after running the
    # check), used by GATE, MERGE and PUSH
    assert counts == {"fetch": 1, "merge": 1, "checks_read": 2}
    assert git("log", "-1", "--format=%P", "main", cwd=hive_repo).split() == [
        moved,
        work.head_sha,
    ]
    tree = git("merge-tree", "--write-tree", moved, work.head_sha, cwd=hive_repo)
    assert git("rev-parse", "main^{tree}", cwd=hive_repo) == tree.split()[0]
    assert len(publisher._known) == 0  # the ended job is forgotten


def test_a_parked_job_fetches_again_when_it_resumes(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    finished_work(10, {"docs/i.md": "i\n"}, ["x"])
    _accept(hive_db_url, 10)
    job = _job(db, 10)
    publisher, _ = publishing()  # no checks: the gate parks for a person
    counts = _counted(monkeypatch)
    assert _run(db, publisher).parked == 1
    assert counts == {"fetch": 1, "merge": 1, "checks_read": 0}
    (hive_repo / "README.md").write_text("# moved while parked\n")
    git("commit", "-qam", "moved while the job waited", cwd=hive_repo)
    assert publish.approve(db, 10, "ada")
    assert _run(db, publisher).finished == 1
    # the resumed run (a new claim forgets what the parked one learned): MERGE fetches
    # the moved base and merges on it, PUSH uses that; the gate has no checks to ask about
    assert counts == {"fetch": 2, "merge": 2, "checks_read": 0}
    pushes = [e for e in jobs.effects(db, job.id) if e.effect_key.startswith("push:")]
    assert len(pushes) == 1 and "pushed" in pushes[0].result  # not first onto the old base
    assert git("show", "main:README.md", cwd=hive_repo) == "# moved while parked"
    assert git("show", "main:docs/i.md", cwd=hive_repo) == "i"


def test_accepted_work_whose_job_was_lost_gets_it_from_the_next_pass(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    """The verdict and its job are two writes; `hive chaos --loop` (seed 15, PostgreSQL
    restarted mid-publish) caught an accept that landed just before the store went and
    its job never did: the issue waited for ever."""
    finished_work(11, {"docs/k.md": "k\n"}, ["x"])
    _accept(hive_db_url, 11)  # the verdict, and no job: the process went between the two
    publisher, _ = publishing(checks=(("ok", "true"),))
    off = JobRunner(db, JobRunnerConfig("test-queen"), publisher)
    runner = JobRunner(db, JobRunnerConfig("test-queen", publish="push"), publisher)
    assert not runner.run_once()  # accepted a moment ago: the reviewer's job may be coming
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_dispatch SET reviewed_at = now() - interval '1 minute'")
    assert not off.run_once()  # HIVE_PUBLISH=off: accepted work is left for export
    started = runner.run_once().ran  # the job is made and started on its own thread
    assert runner.pool.wait_idle(60)
    assert (started + runner.run_once().ran).finished == 1
    assert git("show", "main:docs/k.md", cwd=hive_repo) == "k"
    assert _one(hive_db_url, "SELECT count(*) FROM hive.queen_job WHERE issue = 11") == 1
    assert not runner.run_once()  # its job is done: none made again


def test_a_gate_in_a_new_claim_on_a_base_moved_since_the_checks_checks_again(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    queen_checkout: Checkout,
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    # the checks pass, then the claim is lost before the gate (a store restart); another
    # job's fetch moves the clone's base meanwhile: the new claim's gate finds no checks
    # on its merge and sends the job back to CHECKS (it waited for a person for ever)
    finished_work(11, {"docs/j.md": "j\n"}, ["x"])
    _accept(hive_db_url, 11)
    job = _job(db, 11)
    publisher, _ = publishing(checks=(("ok", "true"),))
    handlers = publisher.handlers()
    _dies_at(db, handlers, Step.GATE)
    (hive_repo / "README.md").write_text("# moved by a person\n")
    git("commit", "-qam", "moved after the checks", cwd=hive_repo)
    with own_repo(queen_checkout) as repo:  # another job's fetch
        refresh_base(repo, str(hive_repo), "main", auth=queen_checkout.auth)
    _claim_runs_out(hive_db_url)
    assert run_one_job(db, "q2", handlers, ttl_seconds=60).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    assert git("show", "main:README.md", cwd=hive_repo) == "# moved by a person"
    assert git("show", "main:docs/j.md", cwd=hive_repo) == "j"
    merges = _one(hive_db_url, "SELECT count(DISTINCT merge_sha) FROM hive.queen_check")
    assert merges == 2  # checked again on the merge with the moved base


def test_each_jobs_check_sees_its_merge_exactly_whatever_the_last_check_left(
    db: Any,
    finished_work: Callable[..., Finished],
    publishing: Callable[..., tuple[Publisher, HiveMetrics]],
    hive_repo: Path,
    hive_db_url: str,
    queen_checkout: Checkout,
    tmp_path: Path,
) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    # each check lists its tree, then leaves a file behind and changes a tracked one
    check = (
        f"find . -mindepth 1 -printf '%y %m %p\\n' | sort > {seen}/$HIVE_ISSUE"
        f" && cat docs/a.md >> {seen}/$HIVE_ISSUE"
        " && echo left > leftover.txt && echo tampered > docs/a.md && chmod 700 docs"
    )
    publisher, _ = publishing(checks=(("lists", check),))
    finished_work(1, {"docs/a.md": "hello\n"}, ["x"])
    _accept(hive_db_url, 1)
    _job(db, 1)
    assert _run(db, publisher).finished == 1
    finished_work(2, {"docs/b.md": "b\n"}, ["x"])
    _accept(hive_db_url, 2)
    _job(db, 2)
    assert _run(db, publisher).finished == 1
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git("--work-tree", str(fresh), "checkout", "main", "--", ".", cwd=hive_repo)
    listing = subprocess.run(
        ["find", ".", "-mindepth", "1", "-printf", "%y %m %p\\n"],
        cwd=fresh,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (seen / "2").read_text() == "".join(sorted(listing.splitlines(True))) + "hello\n"
    # one tree, kept: the second job's was the first's, brought forward
    assert [p.name for p in (queen_checkout.workdir / "checks").iterdir()] == ["kept-0"]
