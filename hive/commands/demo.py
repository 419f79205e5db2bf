"""`hive demo`: the whole flow on this machine, with no model and no key.

A sample repository (hive/demo_data.py) under `--dir` (default `.hive/demo`), five
sample issues in a database of its own (`hive_demo`, dropped and created again on every
run, beside the configured or embedded database), a Queen that only queues orders
(`HIVE_QUEEN_BEES_RUN_ELSEWHERE=on`) and two runner processes, each a real
`python -m hive serve` with the demo agent. Finished work is judged by the demo reviewer,
checked by a sample check (`HIVE_CHECK_SYNTAX`: the program still compiles), merged into
the sample repository's `main` and its issue closed; issue 3 is sent back once and
accepted on its second attempt. When every issue is merged, each process gets SIGTERM and
must exit 0; then a summary (issue, attempts, verdicts, merge sha) and `main`'s log as
dulwich reads it. Exit 1 with one line when something did not happen in time.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import signal
import sys
import time
from pathlib import Path

import psycopg
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive import demo_data
from hive.errors import HiveError
from hive.rules.modes import Role
from hive.services import database, demo
from hive.services.demo import DATABASE, Row, Stand
from hive.settings import Settings
from hive.swarm import Serve, WaitTimeout, kill_everything_under, start_serve, wait_for

MARKER = ".hive-demo"  # a directory holding it is the demo's own, safe to clear
DEMO_KEY = "demo-key-not-a-secret"
TIMEOUT_SECONDS = 180.0
EXIT_SECONDS = 30.0  # a clean drain with no bee left is well under a second
POLL_SECONDS = 0.2


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "demo",
        help="the whole flow: a sample repository, issues, a Queen and two runners",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dir", type=Path, default=Path(".hive/demo"), help="where it works (.hive/demo)"
    )
    parser.add_argument("--runners", type=_runners, default=2, help="runner processes (2)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=TIMEOUT_SECONDS,
        help=f"seconds for every order to end ({TIMEOUT_SECONDS:g})",
    )
    parser.set_defaults(func=run)


def _runners(raw: str) -> int:
    if not raw.isdigit() or not 1 <= int(raw) <= 8:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of runners from 1 to 8")
    return int(raw)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    root = _fresh_directory(args.dir)  # refused before a server is started for nothing
    server_url = database.database_url(settings)
    database.check_reachable(server_url)
    url = demo.fresh_database(server_url)
    repo = root / "repo"
    demo_data.make_repository(repo)
    demo.add_sample_issues(url)
    print(
        f"hive demo: sample repository {repo}, {len(demo_data.ALL_ISSUES)} issues, "
        f"database {DATABASE}"
    )
    serves: list[Serve] = []
    try:
        common = _environment(settings, url, repo)
        serves.append(_start(root, "queen", common, Role.QUEEN))
        for n in range(1, args.runners + 1):
            serves.append(_start(root, f"runner-{n}", common, Role.RUNNER))
        _watch(url, serves, args.timeout)
        _stop(serves)
    except BaseException:
        kill_everything_under(root, serves)
        raise
    rows = demo.summary(url)
    _print(rows, url, repo)
    unmerged = [r for r in rows if not r.merged_sha]
    if unmerged:
        what = ", ".join(f"#{r.issue} {r.verdicts or 'never judged'}" for r in unmerged)
        raise HiveError(f"demo: not every issue merged: {what} (logs in {root / 'logs'})")
    return 0


def _fresh_directory(path: Path) -> Path:
    root = path.resolve()
    if root.exists() and any(root.iterdir()) and not (root / MARKER).exists():
        raise HiveError(f"{root} exists and is not a hive demo directory: choose another --dir")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / MARKER).write_text("made by `hive demo`; cleared by the next one\n")
    return root


def _environment(settings: Settings, url: str, repo: Path) -> dict[str, str]:
    """What every process of the demo shares; short clocks so the demo takes seconds."""
    return {
        "HIVE_DATABASE_URL": url,
        "HIVE_REPO_URL": str(repo),
        "HIVE_BASE_REF": demo_data.BASE,
        "HIVE_AGENT": "demo",
        "HIVE_WORKER_KEY": DEMO_KEY,
        "HIVE_WORKER_LANES_PER_KEY": "2",  # one key, both runners busy at once
        "HIVE_QUEEN_BEES_RUN_ELSEWHERE": "on",
        "HIVE_QUEEN_TICK_SECONDS": "1",
        "HIVE_RUNNER_SECONDS": "0.5",
        "HIVE_BEE_MEMORY_MB": "256",
        "HIVE_HTTP_ADDR": "127.0.0.1:0",
        # the sample check: the program still compiles once the branch is merged
        "HIVE_CHECK_SYNTAX": f"{shlex.quote(sys.executable)} -m py_compile greet.py",
        "HIVE_PUBLISH": "push",
        "HIVE_SHAPER_AGENT": "demo",  # issue 6 comes unshaped
        "HIVE_SHAPE": "apply",
        # the demo's turns run in the sandbox the user's settings ask for (auto)
        "HIVE_AGENT_SANDBOX": settings.agent_sandbox,
        "HIVE_LOG_FORMAT": settings.log_format,
        "HIVE_LOG_LEVEL": settings.log_level,
    }


def _start(root: Path, name: str, common: dict[str, str], role: Role) -> Serve:
    env = {**common, "HIVE_ROLE": role.value, "HIVE_WORKDIR": str(root / name)}
    if role is Role.RUNNER:
        env["HIVE_RUNNER_NAME"] = name
    serve = start_serve(name, env, cwd=root, log_dir=root / "logs")
    print(f"  started {name} (pid {serve.pid}), log {serve.log_path}")
    return serve


def _watch(url: str, serves: list[Serve], timeout_seconds: float) -> None:
    """Print each issue's moves until every sample issue is merged (or closed)."""
    wanted = {sample.number for sample in demo_data.ALL_ISSUES}
    seen: dict[int, Stand] = {}
    began = time.monotonic()
    with psycopg.connect(url, autocommit=True) as db:

        def all_closed() -> bool:
            for serve in serves:
                code = serve.exit_code()
                if code is not None:
                    raise HiveError(
                        f"demo: {serve.name} exited {code} before the issues were merged; "
                        f"its log {serve.log_path} ends:\n{serve.tail(10)}"
                    )
            closed = set()
            for number, stand in sorted(demo.states(db).items()):
                if seen.get(number) != stand:
                    seen[number] = stand
                    print(f"  {time.monotonic() - began:6.1f} s  #{number} {stand.said}")
                if stand.closed is not None:
                    closed.add(number)
            return wanted <= closed

        try:
            wait_for(all_closed, timeout_seconds, "every issue merged", poll_seconds=POLL_SECONDS)
        except WaitTimeout:
            open_ones = sorted(n for n in wanted if not ((s := seen.get(n)) and s.merged))
            raise HiveError(
                f"demo: issues {open_ones} were not merged within {timeout_seconds:g} s "
                f"(logs in {serves[0].log_path.parent})"
            ) from None


def _stop(serves: list[Serve]) -> None:
    """SIGTERM to every process, runners first; each must exit 0."""
    for serve in reversed(serves):
        serve.send(signal.SIGTERM)
    for serve in reversed(serves):
        try:
            code = serve.wait(EXIT_SECONDS)
        except WaitTimeout as err:
            raise HiveError(f"demo: {err} after SIGTERM (log {serve.log_path})") from None
        if code != 0:
            raise HiveError(
                f"demo: {serve.name} exited {code} after SIGTERM, not 0; its log ends:\n"
                f"{serve.tail(10)}"
            )
        print(f"  {serve.name} drained and exited 0")


def shown_url(url: str) -> str:
    """`url` fit to print: a password in it is replaced by a placeholder (never shown)."""
    if not psycopg.conninfo.conninfo_to_dict(url).get("password"):
        return url
    return psycopg.conninfo.make_conninfo(url, password="YOUR-PASSWORD")


def _print(rows: list[Row], url: str, repo: Path) -> None:
    print()
    print(
        f"{'issue':>5}  {'attempts':>8}  {'verdicts':<18}  {'runner':<9}  {'merged as':<12}  title"
    )
    for r in rows:
        merged = r.merged_sha[:12] if r.merged_sha else "-"
        print(
            f"{r.issue:>5}  {r.attempts:>8}  {r.verdicts:<18}  {r.runner:<9}  {merged:<12}  "
            f"{r.title}"
        )
    print()
    print(f"{repo}: git log --oneline main (read with dulwich)")
    for line in log_oneline(repo, demo_data.BASE):
        print(f"  {line}")
    print()
    print(f"The orders are in the {DATABASE} database: `hive why N` and `hive logs N` with")
    print(f"  export HIVE_DATABASE_URL={shlex.quote(shown_url(url))}")


def log_oneline(repo: Path, branch: str, limit: int = 20) -> list[str]:
    """`git log --oneline` of `branch`, newest first, as dulwich reads it."""
    with Repo(str(repo)) as opened:
        head = opened.refs[Ref(f"refs/heads/{branch}".encode())]
        lines = []
        for entry in opened.get_walker(include=[head], max_entries=limit):
            subject = entry.commit.message.decode("utf-8", "replace").splitlines()[0]
            lines.append(f"{entry.commit.id.decode()[:7]} {subject}")
        return lines
