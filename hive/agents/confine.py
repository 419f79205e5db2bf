"""The sandbox a process's turns run in, chosen once from its settings at start.

`start(settings)` picks the sandbox (HIVE_AGENT_SANDBOX, sandbox_choice.choose), starts the
egress proxy when HIVE_AGENT_NETWORK=allow, installs the result for every turn of this
process, and says it in one line. A sandbox that `on` asks for and this machine cannot
give is a UsageError: the process does not start.
"""

from __future__ import annotations

import atexit
import logging

from hive.agents import sandbox, sandbox_choice
from hive.agents.egress import Proxy
from hive.errors import UsageError
from hive.settings import Settings

log = logging.getLogger("hive.sandbox")


def chosen(settings: Settings) -> sandbox.Sandbox:
    """The sandbox `settings` ask for on this machine (no proxy yet)."""
    try:
        return sandbox_choice.choose(
            sandbox.Mode(settings.agent_sandbox),
            sandbox.Network(settings.agent_network),
            settings.agent_sandbox_paths,
        )
    except sandbox.SandboxError as exc:
        raise UsageError(str(exc)) from exc


def start(settings: Settings) -> sandbox.Sandbox:
    """Choose, start the proxy if needed, install, and say it (see the module)."""
    chosen_one = chosen(settings)
    if chosen_one.network is sandbox.Network.ALLOW:
        proxy = Proxy(frozenset(settings.agent_allow_hosts)).start()
        atexit.register(proxy.close)  # its socket's directory goes with the process
        chosen_one = chosen_one.with_proxy(proxy.socket_path, proxy.port)
    sandbox_choice.install(chosen_one)
    if chosen_one.on:
        log.info("%s", sandbox_choice.describe(chosen_one))
    else:
        log.warning("%s", sandbox_choice.describe(chosen_one))
    return chosen_one


def said(settings: Settings) -> str:
    """The sandbox's kind as `hive status` says it; never raises: a sandbox `on` asks for
    and this machine lacks is `none`, and turns would not start."""
    try:
        return chosen(settings).kind.value
    except UsageError:
        return "none"
