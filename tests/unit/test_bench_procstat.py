"""`hive.bench.procstat`: the CPU a process spent itself, without its children's."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from hive.bench.procstat import TICKS_PER_SECOND, own_cpu_seconds

BURN_SECONDS = 0.3
BURN = f"import time\nt = time.process_time()\nwhile time.process_time() - t < {BURN_SECONDS}: pass"


def test_a_process_own_cpu_leaves_out_its_childrens_and_a_gone_one_has_none() -> None:
    before = own_cpu_seconds(os.getpid())
    started = time.process_time()
    while time.process_time() - started < BURN_SECONDS:
        pass
    spent = own_cpu_seconds(os.getpid()) - before
    assert spent >= BURN_SECONDS - 2 / TICKS_PER_SECOND
    subprocess.run([sys.executable, "-c", BURN], check=True)
    assert own_cpu_seconds(os.getpid()) - before < spent + BURN_SECONDS / 2  # not the child's
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert own_cpu_seconds(gone.pid) == 0.0
