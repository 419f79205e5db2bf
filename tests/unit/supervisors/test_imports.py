import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

_PROBE = (
    "import sys, supervisors, supervisors.signals, supervisors.work, supervisors.pool;"
    "bad = sorted(m for m in sys.modules if m == 'hive' or m.startswith('hive.'));"
    "print(bad); sys.exit(1 if bad else 0)"
)


def test_supervisors_does_not_import_hive() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "[]"
