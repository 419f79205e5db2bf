"""Which sandbox a setting gets, and what a wrapped command looks like: no process runs
here (the sandbox's own behaviour is tests/e2e/sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.agents.sandbox import (
    PROC_FILES,
    Kind,
    Mode,
    Network,
    Sandbox,
    SandboxError,
    git_dirs,
    program_paths,
)
from hive.agents.sandbox_choice import choose, describe
from hive.settings import Settings, SettingsError


def test_auto_takes_what_the_machine_has_and_says_off_when_it_has_nothing() -> None:
    assert choose(Mode.AUTO, found=Kind.LANDLOCK).kind is Kind.LANDLOCK
    assert choose(Mode.AUTO, found=Kind.BWRAP_SECCOMP).kind is Kind.BWRAP_SECCOMP
    off = choose(Mode.AUTO, found=Kind.OFF)
    assert not off.on
    assert describe(off).startswith("off")


def test_on_refuses_to_start_without_a_sandbox_and_says_why() -> None:
    with pytest.raises(SandboxError, match="HIVE_AGENT_SANDBOX=on"):
        choose(Mode.ON, found=Kind.OFF)
    assert choose(Mode.ON, found=Kind.LANDLOCK).on


def test_off_is_off_whatever_the_machine_has() -> None:
    assert choose(Mode.OFF, found=Kind.BWRAP_SECCOMP).kind is Kind.OFF


def test_a_closed_network_needs_a_sandbox() -> None:
    with pytest.raises(SandboxError, match="HIVE_AGENT_NETWORK=allow"):
        choose(Mode.AUTO, Network.ALLOW, found=Kind.OFF)
    with pytest.raises(SandboxError):
        choose(Mode.OFF, Network.ALLOW)


def test_an_unsandboxed_command_is_left_as_it_is(tmp_path: Path) -> None:
    argv = ["/bin/sh", "-c", "true"]
    assert Sandbox().wrap(argv, tree=tmp_path, private=tmp_path) == argv


def test_bubblewrap_binds_the_tree_and_the_private_directory_and_no_more(tmp_path: Path) -> None:
    tree, private = tmp_path / "tree", tmp_path / "private"
    sandbox = Sandbox(kind=Kind.BWRAP_SECCOMP, bwrap="/x/bwrap")
    argv = sandbox.wrap(["/bin/true"], tree=tree, private=private)
    # bubblewrap ignores SIGTERM, and `env` inside gives the agent its default back
    assert argv[:3] == ["/bin/sh", "-c", 'trap "" TERM; exec "$@"']
    assert argv[4] == "/x/bwrap"
    assert argv[-4:] == ["--", "env", "--default-signal=TERM", "/bin/true"]
    binds = [argv[i + 1] for i, word in enumerate(argv) if word == "--bind"]
    assert binds == [str(tree), str(private)]
    for flag in ("--unshare-user", "--unshare-pid", "--die-with-parent", "--unshare-ipc"):
        assert flag in argv
    assert "--unshare-net" not in argv
    assert argv[argv.index("--chdir") + 1] == str(tree)
    # the socket filter is installed before bubblewrap starts, and all inside inherit it
    confinement = sandbox.confinement(tree=tree, private=private)
    assert confinement is not None and confinement.rules is None
    confinement.close()


def test_landlock_alone_is_applied_in_the_turn_s_first_process_with_no_launcher(
    tmp_path: Path,
) -> None:
    sandbox = Sandbox(kind=Kind.LANDLOCK)
    assert sandbox.wrap(["/bin/true"], tree=tmp_path, private=tmp_path) == ["/bin/true"]
    confinement = sandbox.confinement(tree=tmp_path, private=tmp_path)
    assert confinement is not None
    try:
        rules = confinement.rules
        # its own /proc entry is added in the child; no other process's, no /proc itself
        assert "/proc" not in rules.read and "/proc/self" not in rules.read
        assert set(PROC_FILES) <= set(rules.read)
        assert str(tmp_path) in rules.write and rules.open_network
    finally:
        confinement.close()
    closed = Sandbox(kind=Kind.BWRAP_SECCOMP, network=Network.ALLOW)
    assert closed.confinement(tree=tmp_path, private=tmp_path) is None  # the launcher's


def test_a_closed_network_under_bubblewrap_has_its_own_namespace_and_a_relay(
    tmp_path: Path,
) -> None:
    sandbox = Sandbox(kind=Kind.BWRAP_SECCOMP, bwrap="bwrap", network=Network.ALLOW)
    sandbox = sandbox.with_proxy("/run/proxy.sock", 4000)
    argv = sandbox.wrap(["/bin/true"], tree=tmp_path, private=tmp_path)
    assert "--unshare-net" in argv
    assert "--relay" in argv and argv[argv.index("--relay") + 1] == "3128=/run/proxy.sock"
    # the relay connects to the proxy's Unix socket; the agent after it cannot
    assert argv.index("--no-unix-sockets") < argv.index("/bin/true")
    assert sandbox.proxy_url() == "http://127.0.0.1:3128"


def test_a_closed_network_under_landlock_alone_connects_only_to_the_proxy_port(
    tmp_path: Path,
) -> None:
    sandbox = Sandbox(kind=Kind.LANDLOCK, network=Network.ALLOW).with_proxy("/p.sock", 4000)
    confinement = sandbox.confinement(tree=tmp_path, private=tmp_path)
    assert confinement is not None
    confinement.close()
    assert (confinement.rules.port, confinement.rules.open_network) == (4000, False)
    assert sandbox.proxy_url() == "http://127.0.0.1:4000"


def test_a_linked_worktree_s_git_directories_are_the_turn_s_too(tmp_path: Path) -> None:
    common = tmp_path / "repo" / ".git"
    own = common / "worktrees" / "queen-1"
    own.mkdir(parents=True)
    (own / "commondir").write_text("../..\n")
    tree = tmp_path / "queen-1"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {own}\n")
    assert git_dirs(tree) == [str(own), str(common)]
    assert git_dirs(tmp_path / "repo") == []


def test_an_npm_program_brings_its_node_modules(tmp_path: Path) -> None:
    package = tmp_path / "npm" / "node_modules" / "@x" / "cli"
    package.mkdir(parents=True)
    (package / "cli.js").write_text("")
    link = tmp_path / "npm" / "node_modules" / ".bin"
    link.mkdir()
    (link / "cli").symlink_to(package / "cli.js")
    found = program_paths(str(link / "cli"))
    assert str(tmp_path / "npm" / "node_modules") in found
    assert program_paths("relative/cli") == []
    assert str(tmp_path / "agent.sh") in program_paths("sh", f"{tmp_path / 'agent.sh'} --x")


def test_the_sandbox_settings_are_read_and_their_mistakes_named() -> None:
    base = {"HIVE_RUNNER_NAME": "r"}
    settings = Settings.from_env(
        base
        | {
            "HIVE_AGENT_SANDBOX": "on",
            "HIVE_AGENT_SANDBOX_PATHS": "/opt/tool, /opt/tool/,/var/cache",
            "HIVE_AGENT_NETWORK": "allow",
            "HIVE_AGENT_ALLOW_HOSTS": "API.anthropic.com:443,api.openai.com:443",
        }
    )
    assert settings.agent_sandbox == "on"
    assert settings.agent_sandbox_paths == ("/opt/tool", "/var/cache")
    assert settings.agent_allow_hosts == ("api.anthropic.com:443", "api.openai.com:443")
    with pytest.raises(SettingsError) as raised:
        Settings.from_env(
            base
            | {
                "HIVE_AGENT_SANDBOX": "maybe",
                "HIVE_AGENT_SANDBOX_PATHS": "relative/path",
                "HIVE_AGENT_ALLOW_HOSTS": "no-port",
            }
        )
    problems = "\n".join(raised.value.problems)
    for name in ("HIVE_AGENT_SANDBOX=", "HIVE_AGENT_SANDBOX_PATHS=", "HIVE_AGENT_ALLOW_HOSTS="):
        assert name in problems
    for bad in ({"HIVE_AGENT_NETWORK": "allow"}, {"HIVE_AGENT_SANDBOX_PATHS": "/"}):
        with pytest.raises(SettingsError):
            Settings.from_env(base | bad)
    with pytest.raises(SettingsError, match="needs a sandbox"):
        Settings.from_env(
            base
            | {
                "HIVE_AGENT_NETWORK": "allow",
                "HIVE_AGENT_ALLOW_HOSTS": "a:1",
                "HIVE_AGENT_SANDBOX": "off",
            }
        )


def test_an_agent_a_signal_killed_inside_bubblewrap_reads_as_killed_by_it() -> None:
    assert Sandbox(kind=Kind.BWRAP_SECCOMP).exit_status(137) == -9
    assert Sandbox(kind=Kind.BWRAP_SECCOMP).exit_status(1) == 1
    assert Sandbox(kind=Kind.BWRAP_SECCOMP).exit_status(128) == 128
    assert Sandbox(kind=Kind.LANDLOCK).exit_status(137) == 137
