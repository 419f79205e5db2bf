"""`python -m hive`: the command line (hive/cli.py).

A `serve` told to stop (SIGTERM) before its tree runs holds no work yet: it exits 0 at
once, as after a clean drain. The handler goes in before anything heavy is imported; the
tree's signal bridge takes the signal over once the tree starts."""

import sys

if sys.argv[1:2] == ["serve"]:
    from hive.stopping_early import stop_before_start

    stop_before_start()

from hive.cli import main  # after the handler: importing takes a while

raise SystemExit(main())
