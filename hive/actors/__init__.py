"""The hive's actors (DESIGN 3): thin shells that gather facts, ask `hive.rules`, and act.

- `queen`: QueenActor, the rounds (decide and write orders)
- `runner`: RunnerActor, the claimer (claims queued orders for this process's bees)
- `bee`: a Bee, one order's turn (start, heartbeat, transcript, ending, hand-back) and
  its state; `bee_actor`: BeeActor, the pool child that owns it
- `reaper`: ReaperActor, the boot reaper and the stall reaper
- `drain`: DrainActor, the drain card on SIGTERM
- `start`: the shared cut-and-start; `ending`: a turn's outcome, salvage, bundle and
  fenced ending; `facts`: what a round reads before it asks the rules (a round is
  bounded in time by `supervisors.bounded`); `host`: the bee pool as the others see it;
  `work`: the registry of work this process holds;
  `loop`: the shape every long-running actor shares; `runtime`: what they share;
  `messages`: what they tell one another, and the names they are found by;
  `service`: a start/stop object as an actor; `verdicts`: what a verdict leads to

`hive/tree.py` wires them. No actor imports the command line or the HTTP server.
"""
