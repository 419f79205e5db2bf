"""`hive demo`: the whole flow on this machine, with no model and no key.

A sample repository (hive/demo_data.py) under `--dir` (default `.hive/demo`), five
sample issues in a database of its own (`hive_demo`, dropped and created again on every
run, beside the configured or embedded database), a Queen that only queues orders
(`HIVE_QUEEN_BEES_RUN_ELSEWHERE=on`) and two runner processes, each a real
`python -m hive serve` with the demo agent. When every order has ended, each process gets
SIGTERM and must exit 0; then a summary (issue, runner, outcome, commits, bundle size)
and how to fetch a bundle with git. Exit 1 with one line when something did not happen
in time.
"""

from __future__ import annotations

import argparse
import io
import shlex
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from dulwich.object_format import SHA1
from dulwich.pack import PackData

from hive import demo_data
from hive.errors import HiveError
from hive.git.importing import parse
from hive.settings import Settings
from hive.store import bundles, connect, issues, migrate, orders, scratch
from hive.swarm import Serve, WaitTimeout, kill_everything_under, start_serve, wait_for

DATABASE = "hive_demo"
MARKER = ".hive-demo"  # a directory holding it is the demo's own, safe to clear
DEMO_KEY = "demo-key-not-a-secret"
TIMEOUT_SECONDS = 180.0
EXIT_SECONDS = 30.0  # a clean drain with no bee left is well under a second
POLL_SECONDS = 0.2
COMMIT_TYPE = 1  # a commit's type number in a pack


def register(sub: argparse._SubParsersAction) -> None:
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


@dataclass(frozen=True)
class Row:
    issue: int
    title: str
    runner: str
    outcome: str
    commits: int
    bundle_bytes: int


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    root = _fresh_directory(args.dir)  # refused before a server is started for nothing
    server_url = connect.database_url(settings)
    connect.check_reachable(server_url)
    url = _fresh_database(server_url)
    repo = root / "repo"
    demo_data.make_repository(repo)
    with psycopg.connect(url, autocommit=True) as db:
        for sample in demo_data.ISSUES:
            issues.upsert(db, sample.number, sample.issue)
    print(
        f"hive demo: sample repository {repo}, {len(demo_data.ISSUES)} issues, database {DATABASE}"
    )
    serves: list[Serve] = []
    try:
        common = _environment(settings, url, repo)
        serves.append(_start(root, "queen", common, HIVE_ROLE="queen"))
        for n in range(1, args.runners + 1):
            serves.append(_start(root, f"runner-{n}", common, HIVE_ROLE="runner"))
        _watch(url, serves, args.timeout)
        _stop(serves)
    except BaseException:
        kill_everything_under(root, serves)
        raise
    rows = _summary(url)
    _print(rows, url, repo)
    unfinished = [r for r in rows if r.outcome != "finished"]
    if unfinished:
        what = ", ".join(f"#{r.issue} {r.outcome}" for r in unfinished)
        raise HiveError(f"demo: not every issue finished: {what} (logs in {root / 'logs'})")
    return 0


def _fresh_directory(path: Path) -> Path:
    root = path.resolve()
    if root.exists() and any(root.iterdir()) and not (root / MARKER).exists():
        raise HiveError(f"{root} exists and is not a hive demo directory: choose another --dir")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / MARKER).write_text("made by `hive demo`; cleared by the next one\n")
    return root


def _fresh_database(server_url: str) -> str:
    """Drop and create DATABASE on the server of `server_url`, migrated; its URL."""
    if psycopg.conninfo.conninfo_to_dict(server_url).get("dbname") == DATABASE:
        raise HiveError(f"HIVE_DATABASE_URL names {DATABASE}, which the demo drops and creates")
    scratch.drop(server_url, DATABASE)
    url = scratch.create(
        server_url,
        DATABASE,
        refused="the demo needs its own: grant CREATEDB to the hive's user, or unset"
        " HIVE_DATABASE_URL to use the embedded server",
    )
    migrate.apply(url)
    return url


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
        "HIVE_LOG_FORMAT": settings.log_format,
        "HIVE_LOG_LEVEL": settings.log_level,
    }


def _start(root: Path, name: str, common: dict[str, str], **extra: str) -> Serve:
    env = {**common, **extra, "HIVE_WORKDIR": str(root / name)}
    if extra.get("HIVE_ROLE") == "runner":
        env["HIVE_RUNNER_NAME"] = name
    serve = start_serve(name, env, cwd=root, log_dir=root / "logs")
    print(f"  started {name} (pid {serve.pid}), log {serve.log_path}")
    return serve


def _watch(url: str, serves: list[Serve], timeout_seconds: float) -> None:
    """Print each order's moves until every sample issue's order has ended."""
    wanted = {sample.number for sample in demo_data.ISSUES}
    seen: dict[int, str] = {}
    began = time.monotonic()
    with psycopg.connect(url, autocommit=True) as db:

        def all_ended() -> bool:
            for serve in serves:
                code = serve.exit_code()
                if code is not None:
                    raise HiveError(
                        f"demo: {serve.name} exited {code} before the orders ended; "
                        f"its log {serve.log_path} ends:\n{serve.tail(10)}"
                    )
            current = {o.issue: o for o in orders.listing(db)}
            for issue, order in sorted(current.items()):
                state = _state(order)
                if seen.get(issue) != state:
                    seen[issue] = state
                    print(f"  {time.monotonic() - began:6.1f} s  #{issue} {state}")
            return wanted <= {i for i, o in current.items() if o.finished_at is not None}

        try:
            wait_for(all_ended, timeout_seconds, "every order to end", poll_seconds=POLL_SECONDS)
        except WaitTimeout:
            open_ones = sorted(wanted - {i for i, s in seen.items() if s.startswith("ended")})
            raise HiveError(
                f"demo: issues {open_ones} did not end within {timeout_seconds:g} s "
                f"(logs in {serves[0].log_path.parent})"
            ) from None


def _state(order: orders.Order) -> str:
    if order.finished_at is not None:
        return f"ended {order.outcome} ({order.claimed_by or 'the Queen'})"
    if order.claimed_by:
        return f"running on {order.claimed_by}"
    return "queued"


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


def _summary(url: str) -> list[Row]:
    rows = []
    with psycopg.connect(url, autocommit=True) as db:
        for sample in demo_data.ISSUES:
            order = orders.get(db, sample.number)
            stored = bundles.get(db, sample.number)
            rows.append(
                Row(
                    issue=sample.number,
                    title=sample.issue.title,
                    runner=(order.claimed_by if order else None) or "-",
                    outcome=(order.outcome if order else None) or "never ran",
                    commits=commits_in(stored.data) if stored else 0,
                    bundle_bytes=stored.size if stored else 0,
                )
            )
    return rows


def shown_url(url: str) -> str:
    """`url` fit to print: a password in it is replaced by a placeholder (never shown)."""
    if not psycopg.conninfo.conninfo_to_dict(url).get("password"):
        return url
    return psycopg.conninfo.make_conninfo(url, password="YOUR-PASSWORD")


def commits_in(bundle: bytes) -> int:
    """How many commits a bundle carries (its pack's commit objects)."""
    pack = PackData.from_file(io.BytesIO(parse(bundle).pack), SHA1)
    return sum(1 for obj in pack.iter_unpacked() if obj.pack_type_num == COMMIT_TYPE)


def _print(rows: list[Row], url: str, repo: Path) -> None:
    print()
    print(f"{'issue':>5}  {'runner':<10}  {'outcome':<22}  {'commits':>7}  {'bundle':>9}  title")
    for r in rows:
        size = f"{r.bundle_bytes} B" if r.bundle_bytes else "-"
        print(
            f"{r.issue:>5}  {r.runner:<10}  {r.outcome:<22}  {r.commits:>7}  {size:>9}  {r.title}"
        )
    first = next((r.issue for r in rows if r.bundle_bytes), None)
    if first is None:
        return
    bundle = f"queen-{first}.bundle"
    print()
    print(f"Fetch a branch with git (the demo's orders are in the {DATABASE} database):")
    print(f"  export HIVE_DATABASE_URL={shlex.quote(shown_url(url))}")
    print(
        f"  hive export {first} -o {bundle} && "
        f'git -C {shlex.quote(str(repo))} fetch "$PWD/{bundle}" '
        f"queen-{first}:queen-{first}"
    )
