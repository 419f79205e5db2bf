"""The real Claude Code and Codex CLIs complete their tool-using turns inside the sandbox,
resume included, with their network closed but for the runner's proxy
(HIVE_AGENT_NETWORK=allow) that lets them reach the fake model API and nothing else; and
a command agent behind the same proxy reaches an allowed host and no other."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hive.agents import TurnContext, start_turn
from hive.agents.egress import Proxy
from hive.agents.launch import Launch
from hive.agents.sandbox import Kind, Network, Sandbox
from hive.agents.sandbox_choice import available, bwrap_program
from tests.e2e.agents import fake_responses, test_claude, test_codex
from tests.e2e.agents.fake_api import FakeApi
from tests.e2e.agents.fake_responses import FakeResponses
from tests.e2e.agents.test_claude import api, claude  # noqa: F401 (fixtures)
from tests.e2e.agents.test_codex import codex  # noqa: F401 (a fixture)

from .test_hostile_turn import Lines, sandbox_of

pytestmark = [pytest.mark.e2e]

KINDS = [Kind.BWRAP_SECCOMP, Kind.LANDLOCK]
TURN_SECONDS = 60.0


class Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from an allowed host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def servers() -> Iterator[tuple[int, int]]:
    """Two HTTP servers on 127.0.0.1: the first allowed, the second not."""
    started = [ThreadingHTTPServer(("127.0.0.1", 0), Hello) for _ in range(2)]
    for server in started:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield started[0].server_address[1], started[1].server_address[1]
    for server in started:
        server.shutdown()
        server.server_close()


PROXIES: list[Proxy] = []


@pytest.fixture(autouse=True)
def _close_proxies() -> Iterator[None]:
    yield
    while PROXIES:
        PROXIES.pop().close()


def closed(kind: Kind, *allow: str) -> tuple[Sandbox, Proxy]:
    proxy = Proxy(frozenset(allow)).start()
    PROXIES.append(proxy)
    sandbox = Sandbox(kind=sandbox_of(kind).kind, bwrap=bwrap_program(), network=Network.ALLOW)
    return sandbox.with_proxy(proxy.socket_path, proxy.port), proxy


PROBE = """
import os, socket, sys, urllib.request
allowed, other = int(sys.argv[1]), int(sys.argv[2])
print("ALLOWED", urllib.request.urlopen(f"http://127.0.0.1:{allowed}/", timeout=10).read().decode())
try:
    urllib.request.urlopen(f"http://127.0.0.1:{other}/", timeout=10)
    print("OTHER reached through the proxy")
except Exception as exc:
    print("OTHER refused by the proxy:", exc)
try:
    socket.create_connection(("127.0.0.1", other), timeout=5)
    print("DIRECT reached")
except OSError as exc:
    print("DIRECT refused:", exc)
"""


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_closed_turn_reaches_an_allowed_host_through_the_proxy_and_nothing_else(
    kind: Kind, servers: tuple[int, int], tmp_path: Path
) -> None:
    allowed, other = servers
    sandbox, proxy = closed(kind, f"127.0.0.1:{allowed}")
    (tmp_path / "probe.py").write_text(PROBE)
    lines = Lines()
    ctx = TurnContext(
        issue=1,
        title="net",
        body="",
        branch="queen-1",
        boundary=(),
        brief="",
        worktree=tmp_path,
        turn_max_seconds=TURN_SECONDS,
        on_line=lines,
        launch=Launch(sandbox=sandbox),
    )
    turn = start_turn(f"command:python3 probe.py {allowed} {other}", ctx)
    assert turn.wait(TURN_SECONDS), lines.text()
    out = lines.text()
    assert "ALLOWED hello from an allowed host" in out, out
    assert "OTHER refused by the proxy: HTTP Error 403" in out, out
    assert "DIRECT refused" in out, out
    assert proxy.refused == 1


def sandboxed(kind: Kind, api_port: int, launch: Launch) -> Launch:
    sandbox, _ = closed(kind, f"127.0.0.1:{api_port}")
    return Launch(pass_env=launch.pass_env, agent_bin=launch.agent_bin, sandbox=sandbox)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_claude_code_writes_with_its_tool_and_resumes_inside_the_sandbox(
    kind: Kind,
    claude: Path,  # noqa: F811
    api: FakeApi,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = Launch(pass_env=("ANTHROPIC_BASE_URL",), agent_bin=str(claude))
    launch = sandboxed(kind, _port(api.url), plain)
    worktree = tmp_path / "runner-a" / "wt"
    api.play(("write", str(worktree / "out.txt"), "written in the sandbox\n"))
    first, lines = test_claude.run(claude, api, worktree, monkeypatch, launch=launch)
    assert first.outcome == "finished", lines.texts()
    assert (worktree / "out.txt").read_text() == "written in the sandbox\n"
    assert first.conversation is not None
    api.play(("text", "second attempt's answer"))
    second, lines = test_claude.run(
        claude, api, tmp_path / "b" / "wt", monkeypatch, launch=launch, resume=first.conversation
    )
    assert second.outcome == "finished", lines.texts()
    assert second.conversation is not None
    assert second.conversation.session_id == first.conversation.session_id


@pytest.fixture
def responses() -> Iterator[FakeResponses]:
    yield from fake_responses.running()


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_codex_runs_its_shell_tool_and_resumes_inside_the_sandbox(
    kind: Kind,
    codex: Path,  # noqa: F811
    responses: FakeResponses,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = Launch(pass_env=("OPENAI_BASE_URL",), agent_bin=str(codex))
    launch = sandboxed(kind, _port(responses.url), plain)
    worktree = tmp_path / "runner-a" / "wt"
    responses.play(("shell", "printf 'written by the tool\\n' > out.txt"))
    first, lines = test_codex.run(codex, responses, worktree, monkeypatch, launch=launch)
    assert first.outcome == "finished", lines.texts()
    assert (worktree / "out.txt").read_text() == "written by the tool\n"
    assert first.conversation is not None
    responses.play(("text", "second attempt's answer"))
    second, lines = test_codex.run(
        codex,
        responses,
        tmp_path / "b" / "wt",
        monkeypatch,
        launch=launch,
        resume=first.conversation,
    )
    assert second.outcome == "finished", lines.texts()
    assert "written by the tool" in json.dumps(responses.requests[-1]["input"])
    assert second.conversation is not None
    assert second.conversation.session_id == first.conversation.session_id


def test_the_sandbox_probe_agrees_with_what_runs(tmp_path: Path) -> None:
    found = available()
    if found is Kind.OFF:
        pytest.skip("no sandbox on this machine")
    sandbox = Sandbox(kind=found, bwrap=bwrap_program())
    argv = ["/bin/sh", "-c", "echo inside; python3 -c 'import socket; socket.socket(1)'"]
    setup = sandbox.confinement(tree=tmp_path, private=tmp_path)
    try:
        done = subprocess.run(
            sandbox.wrap(argv, tree=tmp_path, private=tmp_path),
            capture_output=True,
            text=True,
            check=False,
            preexec_fn=setup,
        )
    finally:
        if setup is not None:
            setup.close()
    # it runs, and inside it a Unix socket is refused (the filter every kind carries)
    assert done.stdout.strip() == "inside", done.stderr
    assert "PermissionError" in done.stderr
