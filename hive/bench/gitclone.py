"""One clone in a process of its own, so that its memory is measured alone:
`python -m hive.bench.gitclone clone URL WORKDIR BASE DEPTH` clones as `hive serve` does
and prints the seconds it took as JSON. `measured(argv)` runs any command (that one, or
the git binary) and reports its wall time and its peak resident memory with its
children's (index-pack, for git)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hive.errors import HiveError

RUN_TIMEOUT_SECONDS = 1800


@dataclass(frozen=True)
class Measured:
    seconds: float
    rss_mb: float
    stdout: bytes


def measured(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> Measured:
    """Run `argv` to its end; its wall time and peak RSS (itself or any child it waited
    for, as wait4 reports it). HiveError when it fails or runs past RUN_TIMEOUT_SECONDS.

    A child forked from this (large) process would count this process's memory as its
    own peak, so `argv` is started by a small process of its own (`measure`), which
    writes what it saw to a report file."""
    with tempfile.TemporaryDirectory(prefix="hive-measure-") as tmp:
        report = Path(tmp) / "report.json"
        out, err = Path(tmp) / "out", Path(tmp) / "err"
        middle = [sys.executable, "-m", "hive.bench.gitclone", "measure", str(report), *argv]
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            done = subprocess.run(
                middle,
                cwd=cwd,
                env=dict(env),
                stdout=stdout,
                stderr=stderr,
                timeout=RUN_TIMEOUT_SECONDS,
                check=False,
            )
        if done.returncode != 0:
            said = err.read_text(errors="replace").strip()[-400:]
            raise HiveError(f"{argv[0]} failed in the bench ({done.returncode}): {said}")
        seen = json.loads(report.read_text())
        return Measured(seen["seconds"], seen["rss_mb"], out.read_bytes())


def _measure(report: str, argv: Sequence[str]) -> int:
    started = time.perf_counter()
    child = subprocess.Popen(list(argv))
    _pid, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = code = os.waitstatus_to_exitcode(status)  # reaped here
    Path(report).write_text(json.dumps({"seconds": seconds, "rss_mb": usage.ru_maxrss / 1024}))
    return code


def main(argv: Sequence[str]) -> int:
    if argv[0] == "measure":
        return _measure(argv[1], argv[2:])
    from hive.git.repo import open_checkout

    url, workdir, base, depth = argv[1:]
    started = time.perf_counter()
    checkout = open_checkout(url, Path(workdir), base, int(depth))
    seconds = time.perf_counter() - started
    checkout.repo.close()
    print(json.dumps({"seconds": seconds, "base_sha": checkout.base_sha}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
