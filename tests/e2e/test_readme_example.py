"""The README's "Embedding the hive in your tests" example, run as a user runs it: its files
are read from README.md (so the two cannot drift), written to a folder of their own, and
pytest runs them in a fresh process that knows the hive only as an installed plugin."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.live]

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "### Embedding the hive in your tests"
EXAMPLE_FILES = ("my_agents.py", "test_my_agent.py")
# a fenced python block whose first line names its file: "# my_agents.py"
_BLOCK = re.compile(r"^```python\n# (?P<name>[\w/]+\.py)\n(?P<body>.*?)^```$", re.M | re.S)
RUN_SECONDS = 180


def example_files(readme: str) -> dict[str, str]:
    """The section's python blocks that start with a `# <file>.py` line, as name -> text
    (the naming line kept: it is a comment). The section ends at the next heading (`## `
    or deeper: a `# ` line is a comment in a code block)."""
    _, found, rest = readme.partition(SECTION + "\n")
    assert found, f"README.md has no section {SECTION!r}"
    section = re.split(r"^#{2,} ", rest, maxsplit=1, flags=re.M)[0]
    return {m["name"]: f"# {m['name']}\n{m['body']}" for m in _BLOCK.finditer(section)}


def test_readme_names_both_files_of_the_embedding_example() -> None:
    assert tuple(example_files(README.read_text())) == EXAMPLE_FILES


def test_readme_embedding_example_passes_under_pytest(tmp_path: Path, hive_pg_url: str) -> None:
    files = example_files(README.read_text())
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    tests = sum(text.count("\ndef test_") for text in files.values())
    # the user's environment, not this session's: no HIVE_ variable but the server's URL
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env.update(HIVE_DATABASE_URL=hive_pg_url, PYTHONPATH=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
    )
    output = f"{done.stdout}\n{done.stderr}"
    assert done.returncode == 0, output
    assert tests > 0
    assert re.search(rf"\b{tests} passed\b", done.stdout), output
