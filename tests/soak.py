"""The proof that the suite does not flake: the whole suite `--passes` times in a row (as
`make test` runs it, coverage included), while a second copy of it runs beside it in a
loop on the same cores. Every run of either copy must pass; a failed run's output is kept.

    make soak                      # five passes (SOAK_PASSES=N for another count)
    .venv/bin/python tests/soak.py --passes 5 --workers 4

Each copy has its own temporary directories and coverage file; each pytest session starts
its own embedded PostgreSQL. The table at the end gives every run's result and time; the
exit code is 0 only when every pass and every finished run beside them passed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STOP_WAIT_SECONDS = 30.0


@dataclass(frozen=True)
class Run:
    copy: str
    number: int
    code: int
    seconds: float
    log: Path

    @property
    def passed(self) -> bool:
        return self.code == 0


def _pytest(workers: int, base: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-n",
        str(workers),
        "--dist",
        "worksteal",
        "--basetemp",
        str(base),
        *extra,
    ]


def _run(copy: str, number: int, command: list[str], env: dict[str, str], out: Path) -> Run:
    log = out / f"{copy}-{number}.log"
    started = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _current[copy] = proc
        code = proc.wait()
    return Run(copy, number, code, time.monotonic() - started, log)


_current: dict[str, subprocess.Popen[bytes]] = {}


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """The whole session of a run still going: SIGTERM, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=STOP_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            continue


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="hive-soak-", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIVE_", "COV_"))}
    beside_runs: list[Run] = []
    done = threading.Event()

    def beside() -> None:
        number = 0
        while not done.is_set():
            number += 1
            command = _pytest(args.workers, out / f"beside-{number}", "-p", "no:cov")
            run = _run("beside", number, command, env, out)
            if not done.is_set():  # a run cut short by the end is not counted
                beside_runs.append(run)

    beside_thread = threading.Thread(target=beside, daemon=True)
    beside_thread.start()
    passes: list[Run] = []
    main_env = {**env, "COVERAGE_FILE": str(out / ".coverage")}
    try:
        for number in range(1, args.passes + 1):
            command = _pytest(args.workers, out / f"pass-{number}", "--cov", "--cov-report=")
            run = _run("pass", number, command, main_env, out)
            passes.append(run)
            print(_line(run), flush=True)
    finally:
        done.set()
        if "beside" in _current:
            _stop(_current["beside"])
        beside_thread.join(STOP_WAIT_SECONDS)
    for run in beside_runs:
        print(_line(run))
    failed = [r for r in passes + beside_runs if not r.passed]
    print(
        f"{sum(r.passed for r in passes)} of {len(passes)} passes and "
        f"{sum(r.passed for r in beside_runs)} of {len(beside_runs)} runs beside them passed"
        f"; logs in {out}"
    )
    return 1 if failed or not passes else 0


def _line(run: Run) -> str:
    verdict = "passed" if run.passed else f"FAILED (exit {run.code}): {run.log}"
    summary = _summary(run.log)
    return f"{run.copy} {run.number}: {verdict} in {run.seconds:.0f} s  {summary}"


def _summary(log: Path) -> str:
    """The log's last line: pytest's count of passed and failed tests."""
    lines = log.read_text(errors="replace").strip().splitlines()
    return lines[-1].strip("= ") if lines else ""


if __name__ == "__main__":
    sys.exit(main())
