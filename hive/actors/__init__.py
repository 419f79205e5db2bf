"""The hive's actors (DESIGN 3). They are thin shells that gather facts, ask
`hive.rules`, and act.

Each actor with helpers of its own is a package. An actor alone is a module.

- `queen/`: QueenActor, the rounds (decide and write orders), what a round reads
  (`facts`), one order written and started (`dispatch`), the credit a round reads
- `bee/`: a Bee, one order's turn (start, heartbeat, transcript, ending, hand-back),
  its state, the order it is started with, BeeActor (the pool child that owns it), the
  shared cut-and-start (`start`), the ending (`ending`) and the bee pool as the others
  see it (`host`)
- `reviewer/`: ReviewerActor, finished work judged, and what a verdict leads to
- `reaper/`: ReaperActor, the boot pass (asked by the Queen) and the stall pass, and
  the orders every runner refused
- `runner`: RunnerActor, the claimer (claims queued orders for this process's bees)
- `drain`: DrainActor, the drain card on SIGTERM
- `shaper`, `jobrunner`, `retention`, `forge`, `chat`: the Queen's other loops
- shared by all: `loop` (the shape every long-running actor shares), `messages` (what
  they tell one another, and the names they are found by), `work` (the registry of
  work this process holds), `service` (a start/stop object as an actor)

`hive/tree.py` wires them. No actor imports the command line or the HTTP server.
"""
