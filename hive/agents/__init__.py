"""Turn adapters (DESIGN 6): an agent's turn in a worktree, started, watched and stopped.

`start_turn(agent_spec, ctx) -> Turn` is the door; see base.py for the Turn's lifecycle,
command.py, python.py and demo.py for the three kinds of agent, protocol.py for what an
agent may report, and guard.py for the container's memory guard.
"""

from hive.agents.base import (
    ENDED_BADLY,
    ENDED_UNEXPECTEDLY,
    FINISHED,
    OUTCOMES,
    REASON_BOUND,
    REFUSED,
    STOPPED,
    Ending,
    Report,
    Turn,
    TurnContext,
    TurnOutcome,
    TurnStartError,
)
from hive.agents.protocol import REFUSAL_KINDS, Usage
from hive.agents.start import start_turn

__all__ = [
    "ENDED_BADLY",
    "ENDED_UNEXPECTEDLY",
    "FINISHED",
    "OUTCOMES",
    "REASON_BOUND",
    "REFUSAL_KINDS",
    "REFUSED",
    "STOPPED",
    "Ending",
    "Report",
    "Turn",
    "TurnContext",
    "TurnOutcome",
    "TurnStartError",
    "Usage",
    "start_turn",
]
