"""What git work is allowed to touch (DESIGN 7, hardened).

The hive's git code is dulwich in this process: it runs no hook, no external diff or
textconv, no clean/smudge filter and no signing program, because it never calls the
dulwich entry points that do (`WorkTree.commit`, `porcelain.*`, the blob normalizer); it
builds objects, trees and refs itself. This module holds the checks that are left: the
repository URL (no command transport), the environment a helper process may see (no
credential), and boundary paths (nothing outside the worktree, checked on the disk).

The text half of the boundary rule (no `..`, no absolute path, no `.git`, no control
character) is `hive.rules.shape.plain_path`; here the same paths are resolved against the
real worktree, which catches what text cannot: a symlink that leads out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from hive.errors import HiveError
from hive.rules import shape

# Transports dulwich speaks in this process, spawning nothing. `ssh` is left out: it
# would start the ssh client with this process's environment (and whatever its config
# names as ProxyCommand); `ext::`/`fd::` (git's `<transport>::<address>` form) would run
# whatever the URL names.
ALLOWED_SCHEMES = frozenset({"file", "http", "https", "git"})
_HELPER_FORM = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# scp-like `host:path`: a colon before the first slash
_SCP_LIKE = re.compile(r"^[^/:]+:")

# Environment names a git helper process must never inherit: our keys, and anything
# that looks like a secret or would make git run a program or read another config.
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
_KEPT = frozenset({"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME"})


class UnsafeGitError(HiveError):
    """A URL or path the hive's git work refuses to touch."""


class BoundaryError(UnsafeGitError):
    """A boundary path that is not a plain path inside the worktree."""


def check_url(url: str) -> str:
    """Return `url` when dulwich may fetch from it, else raise UnsafeGitError.

    A local path, or a URL with a scheme in ALLOWED_SCHEMES. Refused: git's
    `<transport>::<address>` helper form (`ext::sh -c ...`), option-like strings, and
    other schemes."""
    if not url or not url.strip():
        raise UnsafeGitError("the repository URL is empty: set HIVE_REPO_URL to a path or URL")
    if url.startswith("-"):
        raise UnsafeGitError(f"refusing repository URL {url!r}: it looks like an option")
    if _HELPER_FORM.match(url):
        helper = url.split("::", 1)[0]
        raise UnsafeGitError(
            f"refusing repository URL with the {helper}:: transport: it runs a command"
        )
    scheme = _SCHEME.match(url)
    if scheme:
        if scheme.group(1).lower() not in ALLOWED_SCHEMES:
            allowed = ", ".join(sorted(ALLOWED_SCHEMES))
            raise UnsafeGitError(
                f"refusing repository URL scheme {scheme.group(1)!r}: expected a path or "
                f"one of {allowed}"
            )
        return url
    if _SCP_LIKE.match(url) and not os.path.exists(url):
        raise UnsafeGitError(
            f"refusing repository URL {url!r}: host:path is ssh, which the hive does not run"
        )
    return url


def git_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for any process spawned by git work (ssh, a test's git binary).

    Only a few harmless variables pass; nothing named like a secret, no `GIT_*` (which can
    name programs, configs and askpass helpers), no `HIVE_*` (the keys live there). Git
    is told to read no system or global config and never to prompt."""
    env = {}
    for name, value in environ.items():
        upper = name.upper()
        if upper not in _KEPT or any(word in upper for word in _SECRET_WORDS):
            continue
        env[name] = value
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def boundary_path(root: Path, path: str) -> str:
    """`path` as a normalised repository path when it stays inside `root`, else raise.

    Refused: what the text rule refuses, and a path whose existing part resolves
    (following symlinks) outside `root` or passes through a symlink. A path that does
    not exist yet is allowed (a bee may create a file the boundary names)."""
    plain = plain_path(path)
    problem = disk_problem(root, plain)
    if problem is not None:
        raise BoundaryError(f"boundary path {path!r} {problem}")
    return plain


def plain_path(path: str) -> str:
    """`path` normalised by the boundary rule (`hive.rules.shape.plain_path`); raise
    BoundaryError with the rule's reason when its text leaves the repository."""
    plain = shape.plain_path(path)
    if isinstance(plain, shape.PathFault):
        raise BoundaryError(f"boundary path {path!r} {plain.value}")
    return plain


def disk_problem(root: Path, plain: str) -> str | None:
    """Why the plain path `plain` leaves the worktree `root` on disk, or None."""
    real_root = root.resolve()
    resolved = (real_root / plain).resolve()
    if resolved != real_root and real_root not in resolved.parents:
        return "leads outside the repository via a symlink"
    # a symlinked directory inside the repository still lets writes through the link
    # land somewhere git would not follow: refuse any symlink on the way but the last
    walk = real_root
    for part in plain.split("/")[:-1]:
        walk = walk / part
        if walk.is_symlink():
            return f"passes through the symlink {part!r}"
    return None
