"""What a `command:` agent gets (hive/agents/command.py runs it):

- the brief on stdin, and in a file named by `HIVE_BRIEF_FILE` (outside the worktree, so
  it is never committed; removed when the turn ends);
- `HIVE_ISSUE` (the issue number), `HIVE_BRANCH`, and `HIVE_BOUNDARY`: the boundary's
  paths, one per line (newline-separated: a path may hold a colon, never a newline);
- the credential in the variable named by `HIVE_KEY_ENV` (default `HIVE_KEY`), absent
  when the turn has no key;
- PATH, HOME and LANG from the hive's environment, the variables HIVE_AGENT_PASS_ENV
  names, and nothing else: never the database URL, another key or any other `HIVE_`
  variable (launch.py);
- with HIVE_AGENT_USER, it runs as that user, with that user's HOME, owning its worktree
  and its brief (launch.py);
- in a sandbox, a private HOME and TMPDIR of its own, and the proxy when its network is
  closed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from hive.agents.base import TurnContext, TurnStartError
from hive.agents.launch import RunAs, passed_variables
from hive.agents.sandbox import Sandbox

# a sandboxed turn's HOME and TMPDIR, in its private directory
PRIVATE_HOME = "home"
PRIVATE_TMP = "tmp"
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_PASSED_THROUGH = ("PATH", "HOME", "LANG")
_TURN_VARIABLES = ("HIVE_ISSUE", "HIVE_BOUNDARY", "HIVE_BRANCH", "HIVE_BRIEF_FILE")


def turn_environment(
    ctx: TurnContext,
    brief_file: Path,
    extra: Mapping[str, str] | None = None,
    run_as: RunAs | None = None,
) -> dict[str, str]:
    """The whole environment of a command agent (see the module docstring)."""
    if ctx.key_env in _PASSED_THROUGH + _TURN_VARIABLES:
        raise TurnStartError(
            f"HIVE_KEY_ENV={ctx.key_env} would overwrite a variable the turn already gets"
        )
    for path in ctx.boundary:
        if "\n" in path:
            raise TurnStartError(
                f"boundary path {path!r} holds a newline (HIVE_BOUNDARY's separator)"
            )
    env = passed_variables(ctx.launch.pass_env, os.environ)
    env |= {
        "PATH": os.environ.get("PATH", _DEFAULT_PATH),
        "HOME": run_as.home if run_as is not None else os.environ.get("HOME", "/"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HIVE_ISSUE": str(ctx.issue),
        "HIVE_BOUNDARY": "\n".join(ctx.boundary),
        "HIVE_BRANCH": ctx.branch,
        "HIVE_BRIEF_FILE": str(brief_file),
    }
    if ctx.key:
        env[ctx.key_env] = ctx.key
    env.update(extra or {})
    return env


def sandbox_environment(sandbox: Sandbox, private: Path) -> dict[str, str]:
    """What a sandboxed turn's environment gains: a private HOME and TMPDIR in its own
    directory, and the proxy when its network is closed (HIVE_AGENT_NETWORK=allow)."""
    if not sandbox.on:
        return {}
    home, tmp = private / PRIVATE_HOME, private / PRIVATE_TMP
    home.mkdir(mode=0o700, exist_ok=True)
    tmp.mkdir(mode=0o700, exist_ok=True)
    env = {"HOME": str(home), "TMPDIR": str(tmp)}
    proxy = sandbox.proxy_url()
    if proxy:
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
            env[name] = proxy
        env["NO_PROXY"] = env["no_proxy"] = ""
    return env


def check_program(program: str, env: Mapping[str, str]) -> None:
    """The program a gate will exec exists (a missing one is a start error, as when it
    was spawned itself). A relative path is the worktree's business: not looked at."""
    if "/" not in program:
        found = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
    else:
        found = not os.path.isabs(program) or os.access(program, os.X_OK)
    if not found:
        raise TurnStartError(f"the agent could not start: no program {program}")
