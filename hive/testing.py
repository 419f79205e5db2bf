"""pytest fixtures for embedding the hive in tests (a pytest plugin, entry point `hive`).

- `hive_pg_url`: a running PostgreSQL for the session: `HIVE_DATABASE_URL` when set,
  else an embedded server in a temporary directory, stopped when the session ends.
- `hive_fresh_database`: a factory of brand-new, empty databases (no `hive` schema).
- `hive_db_url`: a fresh database with every migration applied, one per test.
- `hive_pgbouncer`: PgBouncer in transaction mode in front of `hive_pg_url` (session).
- `hive_route` and `hive_work_url`: the URL the hive under test does its work on:
  `hive_db_url` itself, or (route `pgbouncer`) the same database through PgBouncer, with
  LISTEN on `hive_db_url` (HIVE_LISTEN_URL). A test marked `through_pgbouncer` runs
  both ways; the test's own reads stay on `hive_db_url`.
- `hive_repo`: a sample git repository (`make_repo`, `SAMPLE_FILES`) in a temporary
  directory; `git(*args, cwd=...)` runs the git binary, to judge the hive's work by git.
- `hive_tree`: a factory of started trees (`hive serve`'s, in-process, roles
  queen+runner, the agent you pass, short clocks), drained and stopped after the test.
- `wait_for_ending(db, issue)`: poll the store until an issue's order has ended.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hive import orphans
from hive.store import embedded, pgbouncer, scratch

ROUTES = ("direct", "pgbouncer")
# what a killed session's guard runs (hive.orphans): the server's stop, then its directory
_STOP_EMBEDDED = (
    "import shutil, sys; from pathlib import Path; from hive.store import embedded; "
    "embedded.stop(Path(sys.argv[1])); shutil.rmtree(sys.argv[2], ignore_errors=True)"
)


def database_conninfo(url: str, dbname: str) -> str:
    """The same server as `url`, another database."""
    return scratch.url_of(url, dbname)


@pytest.fixture(scope="session")
def hive_pg_url() -> Iterator[str]:
    given = os.environ.get("HIVE_DATABASE_URL")
    if given:
        yield given
        return
    # never under /root: as root the server's user must traverse every ancestor
    base = Path(tempfile.mkdtemp(prefix="hive-pg-", dir="/tmp"))
    pgdata = base / "pg"
    url = embedded.start(pgdata)
    watcher = orphans.guard([sys.executable, "-c", _STOP_EMBEDDED, str(pgdata), str(base)])
    try:
        yield url
    finally:
        watcher.release()
        embedded.stop(pgdata)
        shutil.rmtree(base, ignore_errors=True)


def _create(url: str, name: str, template: str = "template0") -> str:
    return scratch.create(url, name, template=template, refused="the tests need CREATEDB")


@pytest.fixture
def hive_fresh_database(hive_pg_url: str) -> Iterator[Callable[[], str]]:
    made: list[str] = []

    def make() -> str:
        name = f"hive_t_{uuid.uuid4().hex[:12]}"
        made.append(name)
        return _create(hive_pg_url, name)

    yield make
    for name in made:
        scratch.drop(hive_pg_url, name)


@pytest.fixture(scope="session")
def _hive_template(hive_pg_url: str) -> Iterator[str]:
    """One migrated database per session, copied for each test (CREATE DATABASE ...
    TEMPLATE is much faster than migrating each time)."""
    from hive.store.migrate import apply

    name = f"hive_tpl_{uuid.uuid4().hex[:12]}"
    apply(_create(hive_pg_url, name))
    yield name
    scratch.drop(hive_pg_url, name)


def migrated_database(pg_url: str, template: str) -> Iterator[str]:
    """A fresh database copied from the migrated `template`, dropped after: what
    `hive_db_url` yields, for a test that needs a second one beside it."""
    name = f"hive_t_{uuid.uuid4().hex[:12]}"
    url = _create(pg_url, name, template=template)
    try:
        yield url
    finally:
        scratch.drop(pg_url, name)


@pytest.fixture
def hive_db_url(hive_pg_url: str, _hive_template: str) -> Iterator[str]:
    yield from migrated_database(hive_pg_url, _hive_template)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "through_pgbouncer: run the test directly and through PgBouncer"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("through_pgbouncer") is None:
        return
    # a conftest's fixture (make_runtime) may not be known yet when the test is
    # generated, nor its closure: the route is named here, and hive_work_url reads it
    if "hive_route" not in metafunc.fixturenames:
        metafunc.fixturenames.append("hive_route")
    metafunc.parametrize("hive_route", ROUTES, indirect=True)


@pytest.fixture(scope="session")
def hive_pgbouncer(hive_pg_url: str) -> Iterator[pgbouncer.Bouncer]:
    """PgBouncer in transaction mode before the session's server, strict: each
    transaction on the next server connection, so leaked session state fails."""
    if not pgbouncer.available():
        pytest.fail(f"{pgbouncer.BINARY} is missing: make system installs it")
    base = Path(tempfile.mkdtemp(prefix="hive-pgb-", dir="/tmp"))
    base.chmod(0o711)  # as root PgBouncer runs as another user, who must reach its socket
    bouncer = pgbouncer.start(hive_pg_url, base / "b", pool_size=8, strict=True)
    watcher = orphans.guard_group(bouncer.process.pid, str(base))
    try:
        yield bouncer
    finally:
        watcher.release()
        bouncer.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def hive_route(request: pytest.FixtureRequest) -> str:
    """`direct` unless the test is parametrised (`through_pgbouncer`)."""
    return str(getattr(request, "param", "direct"))


@pytest.fixture
def hive_work_url(
    request: pytest.FixtureRequest, hive_route: str, hive_db_url: str
) -> Iterator[str]:
    """Where the hive under test works: `hive_db_url`, or it through PgBouncer (whose
    transactions for it are counted: a test that passed none through it fails)."""
    if hive_route == "direct":
        yield hive_db_url
        return
    bouncer: pgbouncer.Bouncer = request.getfixturevalue("hive_pgbouncer")
    yield bouncer.url(hive_db_url)
    assert bouncer.transactions(hive_db_url) > 0, "nothing went through PgBouncer"


def routed_environ(hive_db_url: str, work_url: str) -> dict[str, str]:
    """The variables that send a hive's work to `work_url` and its LISTEN to `hive_db_url`."""
    if work_url == hive_db_url:
        return {}
    return {"HIVE_DATABASE_URL": work_url, "HIVE_LISTEN_URL": hive_db_url}


# --- embedding the runtime (hive serve's tree, in-process) -------------------------------

# Files of the sample repository `hive_repo` makes: a small tree with a nested directory,
# so a boundary can name an existing file, a new file in an existing directory, or both.
SAMPLE_FILES = {
    "README.md": "# sample\n",
    "src/app.py": "print('hello')\n",
    "src/util.py": "VALUE = 1\n",
    "docs/notes.md": "notes\n",
}

# when the sample commit was made: a fixed moment, so the same files give the same sha
SAMPLE_COMMIT_AT = 1_700_000_000

# Short clocks for a tree under test: rounds, polls and heartbeats in fractions of a
# second, so a test waits on real conditions for little time. Nothing asserted is weaker.
SHORT_CLOCKS = {
    "HIVE_QUEEN_TICK_SECONDS": "0.5",
    "HIVE_RUNNER_SECONDS": "0.2",
    "HIVE_RUNNER_DRAIN_SECONDS": "30",
    "HIVE_HTTP_ADDR": "127.0.0.1:0",
    "HIVE_BEE_MEMORY_MB": "0",
}


def make_repo(path: Path, files: dict[str, str] | None = None, branch: str = "main") -> Path:
    """A git repository at `path` (made with dulwich: no git binary needed) holding
    `files` (default SAMPLE_FILES) in one commit on `branch`. Returns `path`."""
    from hive.git.commits import init_repository

    init_repository(
        path,
        files or SAMPLE_FILES,
        branch=branch,
        message="sample repository\n",
        author=b"hive test <test@hive.invalid>",
        at=SAMPLE_COMMIT_AT,
    )
    return path


# The git binary, for a test that judges the hive's work with git itself (the hive uses
# dulwich and needs no git binary; a test may).
GIT = shutil.which("git") or "/usr/bin/git"
GIT_TIMEOUT_SECONDS = 60


def git(*args: str, cwd: Path) -> str:
    """Run the git binary in `cwd` and return its output, stripped: the environment the
    hive gives any git process (`git_environment`: no system or global config, so a
    developer's hooks, signing or aliases cannot change a result; no secret), a fixed
    identity, `main` for a new repository. A failure raises AssertionError with git's
    error."""
    from hive.git.safety import git_environment

    env = git_environment(os.environ) | {
        "HOME": str(cwd),
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
    }
    done = subprocess.run(
        [GIT, "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT_SECONDS,
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip()


@pytest.fixture
def hive_repo(tmp_path: Path) -> Path:
    """A sample repository (SAMPLE_FILES on `main`) in a temporary directory."""
    return make_repo(tmp_path / "repo")


def hive_environ(db_url: str, repo: Path, workdir: Path, **overrides: str) -> dict[str, str]:
    """The variables of a hive under test: this database and repository, roles
    queen+runner, one worker key, SHORT_CLOCKS, a unique runner name; `overrides` win
    (names without or with the `HIVE_` prefix)."""
    env = {
        "HIVE_DATABASE_URL": db_url,
        "HIVE_REPO_URL": str(repo),
        "HIVE_WORKDIR": str(workdir),
        "HIVE_ROLE": "queen,runner",
        "HIVE_WORKER_KEY": "test-key-0123456789",
        "HIVE_RUNNER_NAME": f"test-{uuid.uuid4().hex[:8]}",
        **SHORT_CLOCKS,
    }
    for name, value in overrides.items():
        env[name if name.startswith("HIVE_") else f"HIVE_{name.upper()}"] = value
    return env


@pytest.fixture
def hive_tree(
    hive_db_url: str, hive_work_url: str, hive_repo: Path, tmp_path: Path
) -> Iterator[Callable[..., Any]]:
    """A factory of started trees, in-process: `hive_tree(agent, **variables)` builds
    and starts `hive serve`'s tree on a fresh migrated database and `hive_repo`, with the
    given agent (`python:<module>:<callable>`, `command:...` or `demo`), roles
    queen+runner and short clocks (its work through `hive_work_url`); `variables`
    override any `HIVE_` setting. Returns a
    `hive.tree.Hive` (`.runtime.db` is its store pool). Each tree is drained and stopped
    when the test ends."""
    from hive.forge.github.wiring import git_auth
    from hive.git.repo import open_checkout
    from hive.settings import Settings
    from hive.tree import Hive, build

    started: list[Hive] = []

    def start(agent: str = "demo", **variables: str) -> Hive:
        workdir = tmp_path / f"work-{len(started)}"
        env = hive_environ(hive_db_url, hive_repo, workdir, AGENT=agent, **variables)
        env |= routed_environ(hive_db_url, hive_work_url)
        settings = Settings.from_env(env)
        url = settings.repo_url or str(hive_repo)
        checkout = open_checkout(url, workdir, settings.base_ref, auth=git_auth(settings))
        hive = build(settings, hive_work_url, checkout)
        started.append(hive)
        return hive.start()

    yield start
    for hive in reversed(started):
        hive.stop(timeout=60)


def wait_for_ending(db: Any, issue: int, timeout_seconds: float = 30.0) -> Any:
    """Poll the store until `issue`'s order has ended; return the order (a
    `hive.store.orders.Order`). `db` is a URL, a connection or a pool. Raises
    AssertionError with the order as it stands when the deadline passes."""
    from hive.store import orders

    def read() -> Any:
        if isinstance(db, str):
            with psycopg.connect(db, autocommit=True) as conn:
                return orders.get(conn, issue)
        return orders.get(db, issue)

    deadline = time.monotonic() + timeout_seconds
    order = read()
    while order is None or order.finished_at is None:
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"issue #{issue}'s order did not end in {timeout_seconds}s: {order}"
            )
        time.sleep(POLL_SECONDS)
        order = read()
    return order


# how often wait_for_ending reads the store
POLL_SECONDS = 0.05


def wait_for_row(
    db: Any, sql: str, params: tuple[Any, ...], timeout_seconds: float = 60.0
) -> tuple[Any, ...]:
    """Poll the store with `sql` until it returns a row; return the row. `db` is a URL.
    Raises AssertionError naming the query when the deadline passes."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        with psycopg.connect(db, autocommit=True) as conn:
            row = conn.execute(sql, params).fetchone()
        if row is not None:
            return tuple(row)
        if time.monotonic() >= deadline:
            raise AssertionError(f"no row in {timeout_seconds}s for: {sql} {params}")
        time.sleep(POLL_SECONDS)


def wait_for_merge(db: Any, issue: int, timeout_seconds: float = 60.0) -> str:
    """Poll the store until `issue` is closed by the merge of its work; return the merge
    sha. `db` is a URL. Raises AssertionError when the deadline passes."""
    row = wait_for_row(
        db,
        "SELECT d.merged_sha FROM hive.queen_issue AS i JOIN hive.queen_dispatch AS d"
        " ON d.issue = i.number WHERE i.number = %s AND i.state = 'closed'"
        " AND d.merged_sha IS NOT NULL",
        (issue,),
        timeout_seconds,
    )
    return str(row[0])
