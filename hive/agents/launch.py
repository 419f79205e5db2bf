"""How this process launches an agent's process: what reaches it from the hive's
environment, and which user it runs as.

A turn gets PATH, HOME and LANG, the variables the turn itself sets, its key in its key
variable, and the variables `HIVE_AGENT_PASS_ENV` names (a gateway's base URL, a proxy,
a CA file): never a `HIVE_` variable, whatever the list says.

With `HIVE_AGENT_USER` the agent runs as that user (its uid, its group, its
supplementary groups, its HOME): the worktree and the brief are handed to it, and the
hive's own processes are another user's to it, so `/proc/<hive pid>/environ` (the
database URL, the API token, every worker key) is not readable. The hive needs root (or
CAP_SETUID, CAP_SETGID, CAP_CHOWN and CAP_KILL) for that. Without it, a turn runs as the
hive's own user: it can read whatever that user can, the hive's environment included.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hive.agents.sandbox import Sandbox
from hive.agents.sandbox_choice import installed

HIVE_PREFIX = "HIVE_"


class UserError(ValueError):
    """HIVE_AGENT_USER does not name a user of this machine."""


@dataclass(frozen=True)
class Launch:
    """`pass_env`: names of the variables passed through (HIVE_AGENT_PASS_ENV); `user`:
    the user turns run as, a name or uid (HIVE_AGENT_USER; empty: the hive's own);
    `agent_bin`: the claude or codex executable (HIVE_AGENT_BIN; empty: on PATH);
    `sandbox`: what the turn runs in (sandbox.py)."""

    pass_env: tuple[str, ...] = ()
    user: str = ""
    agent_bin: str = ""
    # the turn's sandbox (None: the one installed for this process, sandbox_choice.installed())
    sandbox: Sandbox | None = None

    def sandboxed(self) -> Sandbox:
        return self.sandbox if self.sandbox is not None else installed()


def passed_variables(names: tuple[str, ...], environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `names` that `environ` has, never a `HIVE_` one."""
    return {
        name: environ[name]
        for name in names
        if name in environ and not name.upper().startswith(HIVE_PREFIX)
    }


@dataclass(frozen=True)
class RunAs:
    """The user a turn runs as."""

    uid: int
    gid: int
    groups: tuple[int, ...]
    home: str

    @classmethod
    def of(cls, user: str) -> RunAs:
        try:
            entry = pwd.getpwuid(int(user)) if user.isdigit() else pwd.getpwnam(user)
        except (KeyError, OverflowError):
            raise UserError(f"HIVE_AGENT_USER={user!r} is not a user of this machine") from None
        groups = tuple(os.getgrouplist(entry.pw_name, entry.pw_gid))
        return cls(entry.pw_uid, entry.pw_gid, groups, entry.pw_dir or "/")

    def popen_kwargs(self) -> dict[str, Any]:
        """What `subprocess.Popen` needs to start the agent as this user."""
        return {"user": self.uid, "group": self.gid, "extra_groups": list(self.groups)}

    def hand_over(self, *paths: Path) -> None:
        """Make `paths` (and everything under a directory) this user's."""
        for path in paths:
            os.chown(path, self.uid, self.gid, follow_symlinks=False)
            if path.is_dir() and not path.is_symlink():
                for root, dirs, files in os.walk(path):
                    for name in dirs + files:
                        os.chown(Path(root) / name, self.uid, self.gid, follow_symlinks=False)
