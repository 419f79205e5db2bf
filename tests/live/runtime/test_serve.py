"""`hive serve`'s door: a missing HIVE_REPO_URL or an unsafe bind is one clear line and a
non-zero exit, before anything starts (the e2e suite runs the real processes)."""

from __future__ import annotations

import os
import subprocess
import sys


def serve(**variables: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env.update(variables)
    return subprocess.run(
        [sys.executable, "-m", "hive", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_serve_without_a_repository_says_so_in_one_line():
    done = serve(HIVE_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "hive: HIVE_REPO_URL is not set: name the repository (a path or URL) whose issues "
        "this hive works on"
    ]


def test_serve_refuses_a_public_bind_without_a_token_before_it_starts_anything():
    done = serve(HIVE_HTTP_ADDR="0.0.0.0:8080", HIVE_REPO_URL="/nowhere")
    assert done.returncode != 0
    assert "without HIVE_API_TOKEN" in done.stderr and len(done.stderr.strip().splitlines()) == 1
