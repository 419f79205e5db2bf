"""`hive chaos`: a Queen and several runners as real processes on one PostgreSQL, a few
hundred orders of a `command:` agent of random length, and faults on a seeded schedule:
SIGKILL and SIGTERM of runners and of the Queen (each replaced at once), PostgreSQL
restarts, and a stall of one runner (SIGSTOP past its silent window, then SIGCONT).

At the end the invariants (`invariants`, pure) are checked on what the run left: the
store's rows, the agents' own log of their turns, the bundles as the git binary reads
them, the processes still alive, the exit codes. The same seed gives the same orders, turn
lengths and fault schedule, so a failure can be replayed.

- `plan`: the seeded schedule and the orders' turn lengths (pure).
- `agent`: the agent's shell script and the parser of its log (pure).
- `invariants`: each check, and the table they print as (pure).
- `world`: the server, the repository and the `hive serve` processes.
- `faults`: each fault acted on the world, recording what it saw.
- `run`: one whole run, from an empty directory to the table.
- `loop`: `--loop`'s reviewer, check and invariants (pure): the issues carry a
  criterion and go on through review, a check and publish by push into main.
- `person`: a person pushing to the origin's main meanwhile (--loop).
- `priority`: the issues' priority labels and the order they must go in (pure).
- `dwell`: how long each issue sat in one place, and the bound of each place (pure).
"""
