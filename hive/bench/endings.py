"""endings: N turns' endings at once on one runner (salvage + bundle), against one alone.

One repository of `--files` files; `--endings` worktrees of it, each with
`BEE_COMMITS` commits on its branch and `SALVAGE_FILES` files left uncommitted before
every run. An ending is what a bee's close does to git: salvage the worktree, bundle
`base..queen-<issue>`, each ending with a `Repo` object of its own (`own_repo`), no lock.
`shared_*` runs the same endings the way the hive did before, one at a time under one
process-wide lock on the one shared `Repo`. Each figure is the median of `--runs`;
`*_ratio` = N at once / one alone (N would be fully serial, 1 fully parallel).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from hive.bench.arguments import whole
from hive.bench.git import bench_path, generate, git_binary, git_runner
from hive.errors import HiveError
from hive.git.bundles import bundle
from hive.git.repo import Checkout, open_checkout, own_repo
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree
from hive.rules.branches import branch_name
from hive.settings import Settings

BEE_COMMITS = 5
SALVAGE_FILES = 10
FIRST_ISSUE = 1
MAX_BUNDLE_BYTES = 10**9


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--files", type=whole(10, 100_000), default=2000, help="files")
    parser.add_argument("--commits", type=whole(1, 10_000), default=50, help="commits on base")
    parser.add_argument("--endings", type=whole(1, 64), default=8, help="endings at once")
    parser.add_argument("--runs", type=whole(1, 100), default=5, help="runs per figure (median)")


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    git = git_runner(git_binary())
    with tempfile.TemporaryDirectory(prefix="hive-bench-endings-") as tmp:
        root = Path(tmp)
        upstream = root / "upstream"
        generate(git, upstream, args.files, args.commits)
        checkout = open_checkout(str(upstream), root / "hive", "main")
        try:
            return _Endings(checkout, args.files, args.endings, args.runs).run()
        finally:
            checkout.repo.close()


class _Endings:
    def __init__(self, checkout: Checkout, files: int, endings: int, runs: int) -> None:
        self.checkout, self.files, self.endings, self.runs = checkout, files, endings, runs
        self.issues = list(range(FIRST_ISSUE, FIRST_ISSUE + endings))
        self.trees: dict[int, Path] = {}
        self.round = 0

    def run(self) -> dict[str, Any]:
        for issue in self.issues:
            self.trees[issue] = self._cut(issue)
        alone = [self._timed([self.issues[0]], shared=None) for _ in range(self.runs)]
        together = [self._timed(self.issues, shared=None) for _ in range(self.runs)]
        lock = threading.Lock()
        shared = [self._timed(self.issues, shared=lock) for _ in range(self.runs)]
        one, many, serial = (statistics.median(t) * 1000 for t in (alone, together, shared))
        return {
            "files": self.files,
            "endings": self.endings,
            "runs": self.runs,
            "one_ms": one,
            "together_ms": many,
            "together_ratio": many / one,
            "shared_together_ms": serial,
            "shared_ratio": serial / one,
        }

    def _cut(self, issue: int) -> Path:
        """A worktree whose branch holds BEE_COMMITS commits beyond base."""
        path = cut_worktree(self.checkout.repo, issue, "main", self.checkout.workdir).path
        for n in range(BEE_COMMITS):
            name = bench_path((issue * 31 + n * 101) % self.files).decode()
            with open(path / name, "a") as handle:
                handle.write(f"bee {issue} change {n}\n")
            salvage(path, [name], "finished")
        return path

    def _dirty(self, issue: int) -> list[str]:
        """Leave SALVAGE_FILES changed files in the worktree; their paths."""
        names = [
            bench_path((issue * 17 + k * 37) % self.files).decode() for k in range(SALVAGE_FILES)
        ]
        for name in names:
            with open(self.trees[issue] / name, "a") as handle:
                handle.write(f"left uncommitted in round {self.round}\n")
        return names

    def _timed(self, issues: list[int], shared: threading.Lock | None) -> float:
        """Seconds from the start until every ending of `issues` is done, all at once."""
        self.round += 1
        dirty = {issue: self._dirty(issue) for issue in issues}
        start = threading.Barrier(len(issues) + 1)
        failed: list[BaseException] = []
        threads = [
            threading.Thread(
                target=self._ending, args=(issue, dirty[issue], shared, start, failed.append)
            )
            for issue in issues
        ]
        for thread in threads:
            thread.start()
        start.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        took = time.perf_counter() - began
        if failed:
            raise HiveError(f"an ending failed in the bench: {failed[0]}") from failed[0]
        return took

    def _ending(
        self,
        issue: int,
        boundary: list[str],
        shared: threading.Lock | None,
        start: threading.Barrier,
        fail: Callable[[BaseException], None],
    ) -> None:
        start.wait()
        held: AbstractContextManager[Any] = shared if shared is not None else nullcontext()
        try:
            with held:
                kept = salvage(self.trees[issue], boundary, "finished")
                if shared is not None:
                    out = bundle(self.checkout.repo, issue, "main", MAX_BUNDLE_BYTES)
                else:
                    with own_repo(self.checkout) as repo:
                        out = bundle(repo, issue, "main", MAX_BUNDLE_BYTES)
            if kept.sha is None or out is None or out.head_sha != kept.sha:
                raise HiveError(f"the ending of {branch_name(issue)} did not carry its salvage")
        except BaseException as err:
            fail(err)
