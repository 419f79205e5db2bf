"""`hive bench git --big-file MB`: the hive's git steps on one large random file, each
beside the git binary doing the same, each side in a process of its own so its peak
memory is its own (issue 25: no file size may freeze the hive or grow past bounds).

Steps, in order, on a repository of a few small files: salvage of a new MB-sized file
(git: `add` + `commit`), the bundle of that branch (`bundle create`), its import into a
fresh clone (`fetch` of the bundle), a checkout of the branch (`worktree add`), a
three-way merge with a moved base (`merge-tree --write-tree`), then the file rewritten
through with new random bytes: its salvage and the bundle of both commits, the case
that froze the process. `python -m hive.bench.gitbig STEP ARGS` runs one hive step.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hive.bench.gitclone import Measured, measured

NAME = "big.bin"
_CHUNK = 1 << 20


def run(git_bin: str, git: Callable[..., str], root: Path, megabytes: int) -> dict[str, Any]:
    """Each step's seconds and peak RSS (MB), hive and git, and their ratios."""
    return _BigBench(git_bin, git, root, megabytes).run()


class _BigBench:
    def __init__(self, git_bin: str, git: Callable[..., str], root: Path, megabytes: int) -> None:
        self.git_bin, self.git, self.root, self.megabytes = git_bin, git, root, megabytes
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
        self.result: dict[str, Any] = {"big_file_mb": megabytes}

    def run(self) -> dict[str, Any]:
        from hive.git.repo import open_checkout
        from hive.git.worktrees import cut_worktree

        upstream = self.root / "big-upstream"
        self.git("init", "-q", str(upstream), cwd=self.root)
        for n in range(20):
            (upstream / f"small{n}.txt").write_text(f"small file {n}\n")
        self.git("add", ".", cwd=upstream)
        self.git("commit", "-qm", "small files", cwd=upstream)
        hive_dir = self.root / "big-hive"
        checkout = open_checkout(str(upstream), hive_dir, "main")
        checkout.repo.close()
        theirs = self.root / "big-git.git"
        self.git("clone", "-q", "--bare", str(upstream), str(theirs), cwd=self.root)
        self.result["python_start_rss_mb"] = self._hive("noop").rss_mb

        with _repo(hive_dir) as repo:
            ours = cut_worktree(repo, 1, "main", hive_dir).path
        mine = self.root / "big-git-tree"
        self.git("worktree", "add", "-q", "-b", "queen-1", str(mine), "main", cwd=theirs)
        _random_file(ours / NAME, self.megabytes)
        shutil.copyfile(ours / NAME, mine / NAME)
        self._pair("salvage", self._hive("salvage", ours), self._git_commit(mine))
        self._bundles(hive_dir, theirs, "bundle")
        self._imports(upstream, hive_dir)
        self._checkouts(hive_dir, theirs)
        self._merges(upstream, hive_dir, theirs)
        _random_file(ours / NAME, self.megabytes)
        shutil.copyfile(ours / NAME, mine / NAME)
        self._pair("salvage_rewrite", self._hive("salvage", ours), self._git_commit(mine))
        self._bundles(hive_dir, theirs, "bundle_rewrite")
        return self.result

    def _bundles(self, hive_dir: Path, theirs: Path, step: str) -> None:
        ours_file, theirs_file = self.root / f"{step}.hive", self.root / f"{step}.git"
        hive = self._hive("bundle", hive_dir, ours_file)
        git = self._git("bundle", "create", "-q", str(theirs_file), "main..queen-1", cwd=theirs)
        self._pair(step, hive, git)
        self.result[f"{step}_mb_hive"] = ours_file.stat().st_size / 1e6
        self.result[f"{step}_mb_git"] = theirs_file.stat().st_size / 1e6

    def _imports(self, upstream: Path, hive_dir: Path) -> None:
        target, their_target = self.root / "import-hive.git", self.root / "import-git.git"
        for path in (target, their_target):
            self.git("clone", "-q", "--bare", str(upstream), str(path), cwd=self.root)
        hive = self._hive("import", target, self.root / "bundle.hive")
        bundle_file = str(self.root / "bundle.git")
        git = self._git("fetch", "-q", bundle_file, "queen-1:queen-1", cwd=their_target)
        self._pair("import", hive, git)

    def _checkouts(self, hive_dir: Path, theirs: Path) -> None:
        path = self.root / "checkout-git"
        hive = self._hive("checkout", hive_dir)
        git = self._git("worktree", "add", "-q", "--detach", str(path), "queen-1", cwd=theirs)
        self._pair("checkout", hive, git)

    def _merges(self, upstream: Path, hive_dir: Path, theirs: Path) -> None:
        (upstream / "small0.txt").write_text("base moved on\n")
        self.git("commit", "-qam", "base moves", cwd=upstream)
        self.git("fetch", "-q", str(upstream), "main:main", cwd=theirs)
        from hive.git.repo import refresh_base

        with _repo(hive_dir) as repo:  # fetched beforehand on both sides
            refresh_base(repo, str(upstream), "main")
        hive = self._hive("merge", hive_dir)
        git = self._git("merge-tree", "--write-tree", "main", "queen-1", cwd=theirs)
        self._pair("merge", hive, git)

    def _hive(self, step: str, *args: Path) -> Measured:
        argv = [sys.executable, "-m", "hive.bench.gitbig", step, *map(str, args)]
        return measured(argv, self.env, self.root)

    def _git(self, *args: str, cwd: Path) -> Measured:
        return measured([self.git_bin, "-c", "init.defaultBranch=main", *args], self.env, cwd)

    def _git_commit(self, tree: Path) -> Measured:
        script = f'"{self.git_bin}" add {NAME} && "{self.git_bin}" commit -q --no-verify -m salvage'
        env = self.env | {
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@hive",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@hive",
        }
        return measured(["sh", "-c", script], env, tree)

    def _pair(self, step: str, hive: Measured, git: Measured) -> None:
        inside = json.loads(hive.stdout)["seconds"]  # the step alone, without the start
        self.result |= {
            f"{step}_s_hive": hive.seconds,
            f"{step}_s_hive_in_process": inside,
            f"{step}_s_git": git.seconds,
            f"{step}_ratio": hive.seconds / git.seconds,
            f"{step}_rss_mb_hive": hive.rss_mb,
            f"{step}_rss_mb_git": git.rss_mb,
        }


def _random_file(path: Path, megabytes: int) -> None:
    with open(path, "wb") as out:
        for _ in range(megabytes):
            out.write(os.urandom(_CHUNK))


def _repo(hive_dir: Path) -> Any:
    """The hive's checkout under `hive_dir` (imported here: `noop` measures a bare start)."""
    from dulwich.repo import Repo

    from hive.git.repo import REPO_DIRNAME

    return Repo(str(hive_dir / REPO_DIRNAME))


def main(argv: Sequence[str]) -> int:
    """One hive step in this process: `noop`, `salvage TREE`, `bundle HIVE_DIR OUT`,
    `import REPO BUNDLE`, `checkout HIVE_DIR`, `merge HIVE_DIR` (base fetched already)."""
    step, args = argv[0], [Path(a) for a in argv[1:]]
    started = time.perf_counter()
    if step == "salvage":
        from hive.git.salvage import salvage

        done = salvage(args[0], [NAME], "finished")
        assert done.sha is not None
    elif step == "bundle":
        from hive.git.bundles import bundle

        with _repo(args[0]) as repo:
            out = bundle(repo, 1, "main", 1 << 30)
        assert out is not None
        args[1].write_bytes(out.data)
    elif step == "import":
        from dulwich.repo import Repo

        from hive.git.importing import import_bundle

        with Repo(str(args[0])) as repo:
            import_bundle(repo, 1, args[1])
    elif step == "checkout":
        from hive.git.worktrees import cut_worktree, remove_worktree

        with _repo(args[0]) as repo:
            remove_worktree(repo, args[0] / "queen-1")
            cut = cut_worktree(repo, 1, "main", args[0])
        assert (cut.path / NAME).stat().st_size > 0
    elif step == "merge":
        from dulwich.refs import Ref

        from hive.git.merge import Merged, merge

        with _repo(args[0]) as repo:
            base = repo.refs[Ref(b"refs/remotes/origin/main")].decode()
            head = repo.refs[Ref(b"refs/heads/queen-1")].decode()
            merged = merge(repo, base, head, "bench", 1_800_000_000)
        assert isinstance(merged, Merged) and not merged.fast_forward
    elif step != "noop":
        raise SystemExit(f"unknown step {step}")
    print(json.dumps({"seconds": time.perf_counter() - started}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
