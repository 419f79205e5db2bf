"""A directory of repositories served over git:// by the git binary, on a free port of
127.0.0.1: each connection is handed to `git daemon --inetd`, as inetd would. The other
side a runner meets in the world (git daemon, a forge) is git itself; this serves the
benchmark's yardstick runs and the tests' real server."""

from __future__ import annotations

import socketserver
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

SERVE_TIMEOUT_SECONDS = 600


class GitDaemon:
    """`with GitDaemon(root, git, env) as daemon:` serves every repository under `root`;
    `daemon.url(name)` is the git:// URL of `root/name`. With `pushes`, it takes pushes
    too (`--enable=receive-pack`), as a real origin does."""

    def __init__(self, root: Path, git: str, env: Mapping[str, str], pushes: bool = False) -> None:
        self.root, self.git, self.env = Path(root), git, dict(env)
        self.pushes = pushes
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="git-daemon", daemon=True
        )

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self._server.server_address[1]}/{name}"

    def __enter__(self) -> GitDaemon:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, daemon: GitDaemon) -> None:
        self.daemon = daemon
        super().__init__(("127.0.0.1", 0), _Connection)


class _Connection(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        daemon = self.server.daemon
        root = str(daemon.root)
        services = ["--enable=receive-pack"] if daemon.pushes else []
        subprocess.run(
            [
                daemon.git,
                "daemon",
                "--inetd",
                "--export-all",
                *services,
                f"--base-path={root}",
                root,
            ],
            stdin=self.request.fileno(),
            stdout=self.request.fileno(),
            stderr=subprocess.DEVNULL,
            env=daemon.env,
            timeout=SERVE_TIMEOUT_SECONDS,
            check=False,
        )
