"""`hive --version` prints the package's version, the one pyproject.toml declares and the
installed metadata reports."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import hive

ROOT = Path(__file__).resolve().parents[2]


def test_hive_version_prints_the_package_version() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert hive.__version__ == declared == importlib.metadata.version("hive")
    done = subprocess.run(
        [sys.executable, "-m", "hive", "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"hive {declared}\n"
