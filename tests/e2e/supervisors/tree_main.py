"""A small tree run as a process main, for the signal tests:

    app (rest_for_one): first, bees (pool of 3), last

It prints READY when every child runs; its drain hook prints DRAIN BEGIN, proves the tree
still answers, holds for ``--drain-seconds``, and prints DRAIN END. With ``--stuck`` the
child ``first`` hangs in a handler before the ordered stop, so its stop never runs."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from typing import Any

from supervisors import (
    ChildKind,
    ChildSpec,
    Pool,
    Restart,
    SignalBridge,
    Strategy,
    SupervisedActor,
    Supervisor,
    run_main,
)


class Step(SupervisedActor):
    def __init__(self, name: str, root: Supervisor | None = None) -> None:
        super().__init__()
        self.name = name
        self.root = root

    def on_start(self) -> None:
        if self.root is not None:  # the last child fills its sibling pool
            pool = next(r.target for r in self.root.which_children() if r.id == "bees")
            for n in range(3):
                pool.start_child(f"bee-{n}", child_id=f"bee-{n}")
            print("READY", flush=True)

    def on_receive(self, message: Any) -> Any:
        if message == "hang":
            threading.Event().wait()  # a handler that never returns: its stop never runs
        return f"{self.name} alive"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--drain-seconds", type=float, default=0.0)
    parser.add_argument("--stuck", action="store_true", help="'first' ignores its stop")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="LOG %(message)s")

    bee = ChildSpec("bee", Step.start, restart=Restart.TEMPORARY)
    root = Supervisor(
        "app",
        [
            ChildSpec("first", lambda: Step.start("first"), shutdown=0.3 if args.stuck else 5.0),
            ChildSpec("bees", lambda: Pool("bees", bee), kind=ChildKind.SUPERVISOR),
            ChildSpec("last", lambda: Step.start("last", root), shutdown=5.0),
        ],
        strategy=Strategy.REST_FOR_ONE,
    )
    bridge = SignalBridge()

    def drain(signum: int) -> None:
        print("DRAIN BEGIN", flush=True)
        first = next(r.target for r in root.which_children() if r.id == "first")
        print("DRAIN", first.ask("ping", timeout=5), flush=True)
        threading.Event().wait(args.drain_seconds)  # the drain's hold: the workload itself
        print("DRAIN END", flush=True)

    bridge.add_drain_hook(drain)
    if args.stuck:
        bridge.add_drain_hook(
            lambda signum: next(r.target for r in root.which_children() if r.id == "first").tell(
                "hang"
            )
        )
    run_main(root, bridge)


if __name__ == "__main__":
    main()
