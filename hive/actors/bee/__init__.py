"""The bee: one order's turn and what it needs.

- `bee`: Bee, the turn (start, heartbeat, transcript, ending, hand-back)
- `actor`: BeeActor, the pool child that owns one bee
- `state`: a bee's states and the moves between them
- `order`: the order a bee is started with, and its typed reply
- `config`: what every bee of a process shares, and its ports
- `start`: the shared cut-and-start of a turn
- `ending`: a turn's outcome, salvage, bundle and fenced ending
- `host`: the bee pool as the Queen, the claimer, the reaper and the drain see it
"""
