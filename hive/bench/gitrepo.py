"""`hive bench git --repo URL`: the hive's git steps on any repository's real history (a
path, git://, http(s)://), each beside the git binary doing the same, in one run.

Steps: a clone over the wire (a path is served by `git daemon` for it; each side's clone
runs in a process of its own, so its peak memory is its own), a clone of the path itself
(git: its local clone; also `--no-local`, which the hive's clone was once compared with),
a shallow clone when `--depth` is given, then on each side's clone: a worktree cut of
base, a salvage of SALVAGE_FILES files, the bundle of that one commit and its import
into a fresh clone of the Queen, and a three-way merge of two fresh sides of the tip
against `git merge-tree --write-tree` (`hive.bench.gitmerge`). `*_ratio` = hive / git;
lower is better.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dulwich.objects import Commit
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.bench.gitboot import runner_boot
from hive.bench.gitclone import Measured, measured
from hive.bench.gitdaemon import GitDaemon
from hive.bench.gitmerge import FILES_PER_SIDE, merge_step, mergeable_paths
from hive.git.bundles import bundle
from hive.git.importing import import_bundle
from hive.git.repo import REPO_DIRNAME, open_checkout
from hive.git.salvage import salvage
from hive.git.status import FILE_MODE, flatten
from hive.git.worktrees import cut_worktree, remove_worktree
from hive.rules.branches import branch_name
from hive.settings import Settings

SALVAGE_FILES = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", help="a repository (path or URL): bench its real history")
    parser.add_argument("--base", help="with --repo: the branch (default: the remote's HEAD)")
    parser.add_argument("--depth", type=int, default=0, help="with --repo: a shallow clone too")
    parser.add_argument("--clone-runs", type=int, default=1, help="with --repo: runs per clone")
    parser.add_argument(
        "--boot",
        action="store_true",
        help="with --repo: a runner's boot to its first claim too (needs the database)",
    )


def run(
    args: argparse.Namespace,
    settings: Settings,
    git_bin: str,
    git: Callable[..., str],
    root: Path,
) -> dict[str, Any]:
    return _RepoBench(args, settings, git_bin, git, root).run()


class _RepoBench:
    def __init__(
        self,
        args: argparse.Namespace,
        settings: Settings,
        git_bin: str,
        git: Callable[..., str],
        root: Path,
    ) -> None:
        self.settings, self.boot = settings, args.boot
        self.url, self.runs, self.clone_runs = args.repo, args.runs, args.clone_runs
        self.depth = args.depth
        self.git_bin, self.git, self.root = git_bin, git, root
        self.local = Path(args.repo).absolute() if os.path.isdir(args.repo) else None
        self.base = args.base or self._remote_head()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
        self.clones = 0
        self.work = self.pristine = self.root
        self._last_git = self.root
        self.made: list[tuple[Path, Path]] = []  # (hive's workdir, git's clone) per clone run

    def _remote_head(self) -> str:
        said = self.git("ls-remote", "--symref", self.url, "HEAD", cwd=self.root)
        for line in said.splitlines():
            if line.startswith("ref: refs/heads/"):
                return line.split()[1].removeprefix("refs/heads/")
        return "main"

    def run(self) -> dict[str, Any]:
        result: dict[str, Any] = {"repo": self.url, "base": self.base, "runs": self.runs}
        if self.local is None:
            result |= self.clones_of(self.url, "clone_wire")
            result |= self.boots(self.url, self.url)
        else:
            with GitDaemon(self.local.parent, self.git_bin, self.env) as daemon:
                result |= self.clones_of(daemon.url(self.local.name), "clone_wire")
                if self.depth:
                    result |= self.clones_of(daemon.url(self.local.name), "clone_shallow")
                result |= self.boots(str(self.local), daemon.url(self.local.name))
            result |= self.clones_of(str(self.local), "clone_local")
            result["clone_local_s_git_no_local"] = statistics.median(
                self._git_clone(str(self.local), "--no-local").seconds
                for _ in range(self.clone_runs)
            )
        if self.depth and self.local is None:
            result |= self.clones_of(self.url, "clone_shallow")
        # the steps run on the first clones over the wire, as a runner's would
        ours, theirs = self.made[0]
        result |= self.steps(ours, theirs)
        return result

    def clones_of(self, url: str, step: str) -> dict[str, Any]:
        """The hive's clone of `url` and git's, alternately, `clone_runs` times each."""
        depth = self.depth if step == "clone_shallow" else 0
        hive: list[Measured] = []
        git: list[Measured] = []
        for _ in range(self.clone_runs):
            hive.append(self._hive_clone(url, depth))
            extra = ["--depth", str(depth)] if depth else []
            git.append(self._git_clone(url, *extra))
            self.made.append((self.root / f"hive-clone-{self.clones - 1}", self._last_git))
        seconds = [json.loads(m.stdout)["seconds"] for m in hive]
        ours, theirs = statistics.median(seconds), statistics.median(m.seconds for m in git)
        rss_ours = statistics.median(m.rss_mb for m in hive)
        rss_theirs = statistics.median(m.rss_mb for m in git)
        return {
            f"{step}_s_hive": ours,
            f"{step}_s_git": theirs,
            f"{step}_ratio": ours / theirs,
            f"{step}_rss_mb_hive": rss_ours,
            f"{step}_rss_mb_git": rss_theirs,
            f"{step}_rss_ratio": rss_ours / rss_theirs,
        }

    def boots(self, queen_url: str, runner_url: str) -> dict[str, Any]:
        """With `--boot`: a runner's start to its first claim, cloning over the wire."""
        if not self.boot:
            return {}
        with Repo(str(self.made[0][0] / REPO_DIRNAME)) as repo:
            boundary = self._salvaged_names(repo)[0]
        result = {}
        for depth, key in ((0, "boot_s_hive"), (self.depth, "boot_s_hive_shallow")):
            if key == "boot_s_hive" or depth:
                result[key] = runner_boot(
                    self.settings, queen_url, runner_url, self.base, boundary, depth
                )
        return result

    def _hive_clone(self, url: str, depth: int) -> Measured:
        self.clones += 1
        work = self.root / f"hive-clone-{self.clones}"
        argv = [sys.executable, "-m", "hive.bench.gitclone", "clone", url, str(work)]
        argv += [self.base, str(depth)]
        return measured(argv, self.env, self.root)

    def _git_clone(self, url: str, *options: str) -> Measured:
        self.clones += 1
        target = self._last_git = self.root / f"git-clone-{self.clones}.git"
        argv = [self.git_bin, "clone", "-q", "--bare", "--single-branch", "-b", self.base]
        return measured([*argv, *options, url, str(target)], self.env, self.root)

    def steps(self, ours: Path, theirs: Path) -> dict[str, Any]:
        """Cut, salvage, bundle and import on a clone of each side's own making."""
        self.work = ours
        # the Queen's clones the bundles are imported into hold base and nothing else
        self.pristine = self.root / "pristine.git"
        self.git("clone", "-q", "--bare", str(theirs), str(self.pristine), cwd=self.root)
        repo = Repo(str(ours / REPO_DIRNAME))
        try:
            result = self.cut(repo, theirs)
            names = self._salvaged_names(repo)
            result |= self.salvage(repo, theirs, names)
            result |= self.bundle_and_import(repo, theirs)
            result |= self.merge(repo, theirs)
        finally:
            repo.close()
        return result

    def cut(self, repo: Repo, theirs: Path) -> dict[str, Any]:
        hive, git = [], []
        for n in range(self.runs):
            issue = 1000 + n
            started = time.perf_counter()
            made = cut_worktree(repo, issue, self.base, self.work)
            hive.append(time.perf_counter() - started)
            remove_worktree(repo, made.path)
            path = str(self.root / "git-trees" / branch_name(issue))
            started = time.perf_counter()
            self.git("worktree", "add", "-q", "-b", branch_name(issue), path, self.base, cwd=theirs)
            git.append(time.perf_counter() - started)
            self.git("worktree", "remove", "--force", path, cwd=theirs)
        return _pair("cut", hive, git)

    def merge(self, repo: Repo, theirs: Path) -> dict[str, Any]:
        """A fresh pair of sides a run on the real tip (`hive.bench.gitmerge`): text
        files spread over the tree. A tree without enough of them skips the step."""
        tip = repo.refs[Ref(f"refs/remotes/origin/{self.base}".encode())]
        commit = repo[tip]
        assert isinstance(commit, Commit)
        files = sorted(
            p for p, (mode, _) in flatten(repo, commit.tree).items() if mode == FILE_MODE
        )
        want = 2 * FILES_PER_SIDE + 1
        spread = files[:: max(1, len(files) // (4 * want))]  # a few a directory, all over
        paths = mergeable_paths(repo, tip, [p.encode() for p in spread], want)
        if len(paths) < want:
            return {"merge_skipped": f"fewer than {want} text files of two lines or more"}
        return merge_step(repo, theirs, self.git, tip, paths, self.runs)

    def _salvaged_names(self, repo: Repo) -> list[str]:
        tip = repo[repo.refs[Ref(f"refs/remotes/origin/{self.base}".encode())]]
        assert isinstance(tip, Commit)
        tree = flatten(repo, tip.tree)
        files = sorted(path for path, (mode, _sha) in tree.items() if mode == FILE_MODE)
        step = max(1, len(files) // SALVAGE_FILES)
        return files[::step][:SALVAGE_FILES]

    def salvage(self, repo: Repo, theirs: Path, names: list[str]) -> dict[str, Any]:
        ours = cut_worktree(repo, 1, self.base, self.work).path
        mine = self.root / "git-trees" / "queen-1"
        self.git("worktree", "add", "-q", "-b", "queen-1", str(mine), self.base, cwd=theirs)
        hive, git = [], []
        for n in range(self.runs):
            for tree in (ours, mine):
                for name in names:
                    with open(tree / name, "a") as handle:
                        handle.write(f"salvaged {n}\n")
            started = time.perf_counter()
            salvage(ours, names, "finished")
            hive.append(time.perf_counter() - started)
            started = time.perf_counter()
            self.git("add", "-f", "--", *names, cwd=mine)  # tracked, though perhaps ignored
            self.git("commit", "-q", "--no-verify", "-m", "salvage (finished)", cwd=mine)
            git.append(time.perf_counter() - started)
        return _pair("salvage", hive, git)

    def bundle_and_import(self, repo: Repo, theirs: Path) -> dict[str, Any]:
        """One commit on queen-2 (both sides), bundled; each bundle imported into a fresh
        clone of the Queen's (linked on the hive's side, git's local clone on git's)."""
        ours = cut_worktree(repo, 2, self.base, self.work).path
        names = self._salvaged_names(repo)[:1]
        with open(ours / names[0], "a") as handle:
            handle.write("bee change\n")
        salvage(ours, names, "finished")
        head = repo.refs[Ref(b"refs/heads/queen-2")].decode()
        self.git("fetch", "-q", str(repo.path), "queen-2:queen-2", cwd=theirs)
        hive, git, data = [], [], b""
        git_file = str(self.root / "git.bundle")
        for _ in range(self.runs):
            started = time.perf_counter()
            out = bundle(repo, 2, self.base, 10**10)
            hive.append(time.perf_counter() - started)
            assert out is not None and out.head_sha == head
            data = out.data
            started = time.perf_counter()
            self.git("bundle", "create", "-q", git_file, f"{self.base}..queen-2", cwd=theirs)
            git.append(time.perf_counter() - started)
        result = _pair("bundle", hive, git)
        result["bundle_bytes_hive"] = len(data)
        result["bundle_bytes_git"] = os.path.getsize(git_file)
        hive, git = [], []
        for n in range(self.runs):
            queen = open_checkout(str(self.pristine), self.root / f"queen-{n}", self.base)
            started = time.perf_counter()
            import_bundle(queen.repo, 2, data)
            hive.append(time.perf_counter() - started)
            queen.repo.close()
            target = self.root / f"queen-git-{n}.git"
            self.git("clone", "-q", "--bare", str(self.pristine), str(target), cwd=self.root)
            started = time.perf_counter()
            self.git("fetch", "-q", git_file, "queen-2:queen-2", cwd=target)
            git.append(time.perf_counter() - started)
        return result | _pair("import", hive, git)


def _pair(step: str, hive: list[float], git: list[float]) -> dict[str, Any]:
    ours, theirs = statistics.median(hive) * 1000, statistics.median(git) * 1000
    return {f"{step}_ms_hive": ours, f"{step}_ms_git": theirs, f"{step}_ratio": ours / theirs}
