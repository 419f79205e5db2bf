"""git: worktree cut, salvage, bundle, import and a three-way merge, by the hive (dulwich)
and by the git binary.

A repository of `--files` files and `--commits` commits is generated with
`git fast-import`; each step runs `--runs` times on each side and the medians are
compared (`*_ratio` = hive / git, lower is better). The git binary is only the yardstick:
the hive's side never calls it. Needs /usr/bin/git (or `git` on PATH) to run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.bench import gitbig, gitrepo
from hive.bench.arguments import whole
from hive.bench.gitmerge import merge_step
from hive.errors import HiveError
from hive.git.bundles import bundle
from hive.git.importing import import_bundle
from hive.git.native import missing_extensions
from hive.git.repo import open_checkout
from hive.git.safety import git_environment
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree, remove_worktree
from hive.rules.branches import branch_name
from hive.settings import Settings

LINES_PER_FILE = 20
FILES_PER_DIR = 50
SALVAGE_FILES = 10
BUNDLE_COMMITS = 10
MERGE_FILES_PER_SIDE = 5
GIT_TIMEOUT_SECONDS = 300


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--files", type=int, default=2000, help="files in the repository")
    parser.add_argument("--commits", type=int, default=200, help="commits on base")
    parser.add_argument("--runs", type=int, default=5, help="runs per step (median)")
    parser.add_argument(
        "--big-file",
        type=whole(1, 4096),
        default=0,
        metavar="MB",
        help="instead: each step on one random file of MB megabytes, with peak memory",
    )
    gitrepo.add_arguments(parser)


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """The generated repository's steps, or with `--repo` those of a real one."""
    git = git_binary()
    # a dulwich without its compiled extensions is several times slower: said first
    result: dict[str, Any] = {"dulwich_not_compiled": ", ".join(missing_extensions()) or "none"}
    with tempfile.TemporaryDirectory(prefix="hive-bench-git-") as tmp:
        if args.repo:
            return result | gitrepo.run(args, settings, git, git_runner(git), Path(tmp))
        if args.big_file:
            return result | gitbig.run(git, git_runner(git), Path(tmp), args.big_file)
        return result | _Bench(Path(tmp), git, args.files, args.commits, args.runs).run()


def git_binary() -> str:
    """The git binary's path; HiveError when there is none."""
    git = shutil.which("git") or "/usr/bin/git"
    if not os.path.exists(git):
        raise HiveError("this bench needs the git binary as its yardstick; none found")
    return git


def git_runner(git_bin: str) -> Callable[..., str]:
    """`git(*args, cwd=, stdin=)`: run the binary with a fixed identity and no config of
    the user's; its stdout, or HiveError with its stderr."""
    env = git_environment(os.environ) | {
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@hive",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@hive",
    }

    def git(*args: str, cwd: Path, stdin: bytes | None = None) -> str:
        done = subprocess.run(
            [git_bin, "-c", "init.defaultBranch=main", *args],
            cwd=cwd,
            env=env,
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
        )
        if done.returncode != 0:
            raise HiveError(f"git {args[0]} failed in the bench: {done.stderr.decode().strip()}")
        return done.stdout.decode()

    return git


class _Bench:
    def __init__(self, root: Path, git: str, files: int, commits: int, runs: int) -> None:
        self.root = root
        self.files, self.commits, self.runs = files, commits, runs
        self.git = git_runner(git)

    def run(self) -> dict[str, Any]:
        upstream = self.root / "upstream"
        started = time.perf_counter()
        generate(self.git, upstream, self.files, self.commits)
        generated = time.perf_counter() - started
        started = time.perf_counter()
        checkout = open_checkout(str(upstream), self.root / "hive", "main")
        clone_s = time.perf_counter() - started
        repo = checkout.repo
        theirs = self.root / "git.git"
        self.git("clone", "-q", "--bare", str(upstream), str(theirs), cwd=self.root)
        result: dict[str, Any] = {
            "files": self.files,
            "commits": self.commits,
            "runs": self.runs,
            "generate_s": generated,
            "clone_hive_s": clone_s,
        }
        result |= self.cut(repo, theirs)
        result |= self.salvage(repo, theirs)
        result |= self.bundle_and_import(repo, theirs, upstream)
        result |= self.merge(repo, theirs)
        repo.close()
        return result

    def cut(self, repo: Repo, theirs: Path) -> dict[str, Any]:
        hive_times, git_times = [], []
        for n in range(self.runs):
            issue = 1000 + n
            started = time.perf_counter()
            made = cut_worktree(repo, issue, "main", self.root / "hive")
            hive_times.append(time.perf_counter() - started)
            remove_worktree(repo, made.path)
            path = self.root / "git-trees" / branch_name(issue)
            started = time.perf_counter()
            self.git(
                "worktree", "add", "-q", "-b", branch_name(issue), str(path), "main", cwd=theirs
            )
            git_times.append(time.perf_counter() - started)
            self.git("worktree", "remove", "--force", str(path), cwd=theirs)
        return _pair("cut", hive_times, git_times)

    def salvage(self, repo: Repo, theirs: Path) -> dict[str, Any]:
        ours = cut_worktree(repo, 1, "main", self.root / "hive").path
        mine = self.root / "git-trees" / "queen-1"
        self.git("worktree", "add", "-q", "-b", "queen-1", str(mine), "main", cwd=theirs)
        names = [bench_path(i * 37 % self.files).decode() for i in range(SALVAGE_FILES)]
        hive_times, git_times = [], []
        for n in range(self.runs):
            for tree in (ours, mine):
                for name in names:
                    with open(tree / name, "a") as handle:
                        handle.write(f"salvaged {n}\n")
            started = time.perf_counter()
            done = salvage(ours, names, "finished")
            hive_times.append(time.perf_counter() - started)
            assert len(done.committed) == SALVAGE_FILES
            started = time.perf_counter()
            self.git("add", "--", *names, cwd=mine)
            self.git("commit", "-q", "--no-verify", "-m", "salvage (finished)", cwd=mine)
            git_times.append(time.perf_counter() - started)
        return _pair("salvage", hive_times, git_times)

    def bundle_and_import(self, repo: Repo, theirs: Path, upstream: Path) -> dict[str, Any]:
        """Ten commits on queen-2 (both sides), then bundle and import them."""
        ours = cut_worktree(repo, 2, "main", self.root / "hive").path
        for n in range(BUNDLE_COMMITS):
            name = bench_path(n * 101 % self.files).decode()
            with open(ours / name, "a") as handle:
                handle.write(f"bee change {n}\n")
            salvage(ours, [name], "finished")
        head = repo.refs[Ref(b"refs/heads/queen-2")].decode()
        self.git("fetch", "-q", str(repo.path), "queen-2:queen-2", cwd=theirs)
        hive_times, git_times = [], []
        data = b""
        git_file = self.root / "git.bundle"
        for _ in range(self.runs):
            started = time.perf_counter()
            out = bundle(repo, 2, "main", 10**9)
            hive_times.append(time.perf_counter() - started)
            assert out is not None and out.head_sha == head
            data = out.data
            started = time.perf_counter()
            self.git("bundle", "create", "-q", str(git_file), "main..queen-2", cwd=theirs)
            git_times.append(time.perf_counter() - started)
        result = _pair("bundle", hive_times, git_times)
        result["bundle_bytes_hive"] = len(data)
        result["bundle_bytes_git"] = git_file.stat().st_size
        result["bundle_size_ratio"] = len(data) / git_file.stat().st_size
        result |= self.imports(upstream, data, git_file, head)
        return result

    def imports(self, upstream: Path, data: bytes, git_file: Path, head: str) -> dict[str, Any]:
        hive_times, git_times = [], []
        for n in range(self.runs):
            target = self.root / f"import-{n}"
            self.git("clone", "-q", "--bare", str(upstream), str(target), cwd=self.root)
            their_target = self.root / f"import-git-{n}"
            self.git("clone", "-q", "--bare", str(upstream), str(their_target), cwd=self.root)
            with Repo(str(target)) as checkout:
                started = time.perf_counter()
                done = import_bundle(checkout, 2, data)
                hive_times.append(time.perf_counter() - started)
            assert done.head_sha == head
            started = time.perf_counter()
            self.git("fetch", "-q", str(git_file), "queen-2:queen-2", cwd=their_target)
            git_times.append(time.perf_counter() - started)
        return _pair("import", hive_times, git_times)

    def merge(self, repo: Repo, theirs: Path) -> dict[str, Any]:
        """A fresh pair of sides a run (`hive.bench.gitmerge`)."""
        tip = repo.refs[Ref(b"refs/remotes/origin/main")]
        paths = [bench_path(self.files // 2)]
        paths += [bench_path(i * 31 % self.files) for i in range(2 * MERGE_FILES_PER_SIDE)]
        return merge_step(repo, theirs, self.git, tip, paths, self.runs, MERGE_FILES_PER_SIDE)


def generate(git: Callable[..., str], upstream: Path, files: int, commits: int) -> None:
    """A bare repository at `upstream`: `files` files in directories of FILES_PER_DIR,
    then `commits` commits touching 5 each, written by `git fast-import` (`git(*args,
    cwd=, stdin=)` runs the binary)."""
    git("init", "-q", "--bare", str(upstream), cwd=upstream.parent)
    stream: list[bytes] = []

    def content(i: int, version: int) -> bytes:
        return "".join(
            f"file {i} line {j} version {version if j == i % LINES_PER_FILE else 0}\n"
            for j in range(LINES_PER_FILE)
        ).encode()

    for n in range(1, commits + 1):
        message = f"commit {n}\n".encode()
        stream.append(b"commit refs/heads/main\nmark :%d\n" % n)
        stream.append(b"committer bench <bench@hive> %d +0000\n" % (1_700_000_000 + n))
        stream.append(b"data %d\n%s" % (len(message), message))
        if n > 1:
            stream.append(b"from :%d\n" % (n - 1))
        touched = range(files) if n == 1 else [(n * 7 + k * 13) % files for k in range(5)]
        for i in touched:
            data = content(i, n)
            stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (bench_path(i), len(data), data))
    git("fast-import", "--quiet", cwd=upstream, stdin=b"".join(stream))


def bench_path(i: int) -> bytes:
    """The path of the bench repository's file number `i`."""
    return f"d{i // FILES_PER_DIR:03}/f{i:05}.txt".encode()


def _pair(step: str, hive: list[float], git: list[float]) -> dict[str, Any]:
    median: Callable[[list[float]], float] = statistics.median
    ours, theirs = median(hive) * 1000, median(git) * 1000
    return {f"{step}_ms_hive": ours, f"{step}_ms_git": theirs, f"{step}_ratio": ours / theirs}
