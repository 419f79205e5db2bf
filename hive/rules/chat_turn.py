"""Whether a bee's bot may run its short turn for a person's question in the room
(issue 32), and what it answers: the turn is refused, with a sentence, when the day's
spend reached HIVE_SPEND_CAP_USD or when the issue's account holds no token
(HIVE_CREDITS=on); otherwise the answer is the turn's reply text, cut to a message's
bound.

The turn is a claim on its outbox row (`step`): a process that runs turns claims it, and
each claim counts a try. A row claimed again was cut: its process stopped (a drain
stops the turn in hand and lets the row go) or died (its claim runs out, or the same
runner's next start lets it go). The rule for a cut turn: it runs once more, and the
answer says that a restart cut the first try (what the first spent is counted, and said);
a question whose turn was cut TURN_TRIES_MAX times is answered with a sentence, not
run again. The cap and the credit are asked again at each claim (they may have been
reached since the question).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from hive.rules.chat import HOLD_MAX_SECONDS, one_line
from hive.rules.credits import may_order
from hive.rules.spend import spend_stops
from hive.rules.states import TurnOutcome

NO_ISSUE = "Name the issue (#12) whose conversation I resume, and I answer."
SAID_NOTHING = "My turn ended and said nothing."
TURN_SECONDS = 300.0  # a chat turn's bound (HIVE_TURN_MAX_SECONDS when that is shorter)
TURN_TRIES_MAX = 2  # a question's turn is claimed at most this often (a restart cut one)
CLAIM_SLACK_SECONDS = 30.0  # a claim outlives its turn's bound by this (the stop, the write)
ASSISTANT_PREFIX = "assistant: "  # how claude and codex hand a model's text to the transcript
# an owed turn no process claimed this long is answered with a sentence (UNCLAIMED): no
# process that runs bees has the chat's variables, or none runs
UNCLAIMED_SECONDS = HOLD_MAX_SECONDS
PROTOCOL_PREFIX = "HIVE-"  # an agent's report to the hive (its usage, a refusal): no reply
AGAIN = "(A restart cut my first turn on this question; this is my second.)"


class Step(Enum):
    """What a claimed row gets."""

    RUN = "run"  # the turn runs
    REFUSE = "refuse"  # the refusal's sentence (the cap, the credit)
    UNKNOWN = "unknown"  # the issue is not in the store: a sentence
    CUT = "cut"  # cut by restarts TURN_TRIES_MAX times: a sentence, no turn
    RESTS = "rests"  # every key it may run on rests after a refusal: a sentence, no turn


def step(tries: int, refused: str | None, known: bool, rests_seconds: int = 0) -> Step:
    """What a row claimed for the `tries`th time gets; `refused` is the refusal now,
    `rests_seconds` how long every key the turn may run on still rests (0: one is free)."""
    if refused is not None:
        return Step.REFUSE
    if not known:
        return Step.UNKNOWN
    if tries > TURN_TRIES_MAX:
        return Step.CUT
    if rests_seconds > 0:
        return Step.RESTS
    return Step.RUN


@dataclass(frozen=True)
class KeyPick:
    """The key a turn runs on (None: this process holds none, or every one rests) and,
    when every key rests, the shortest rest left in whole seconds (else 0)."""

    key_index: int | None
    rests_seconds: int = 0


def pick_key(held: Sequence[int], own: int | None, rests: Mapping[int, int]) -> KeyPick:
    """The key of the `held` ones a turn runs on: the issue's `own` (its order's) when
    held and not resting, else the first held that does not rest (`rests`: the seconds
    each resting key has left). No key held: none, and the turn runs without one."""
    if not held:
        return KeyPick(None)
    tried = [index for index in held if index == own] + [i for i in held if i != own]
    for index in tried:
        if rests.get(index, 0) <= 0:
            return KeyPick(index)
    return KeyPick(None, min(rests[index] for index in held))


def resting(issue: int, seconds: int) -> str:
    """The answer of a turn whose every key rests after a provider's refusal."""
    return (
        f"Every key I may run my turn on #{issue} with rests after a provider's refusal,"
        f" {seconds} s more; ask me again then."
    )


def sentence(
    step_: Step, issue: int | None, tries: int, refused: str | None, rests_seconds: int = 0
) -> str:
    """The answer of a row that runs no turn: the refusal, the question for an issue,
    no such issue, the turn that restarts cut `tries - 1` times, or the keys' rest."""
    if step_ == Step.REFUSE and refused is not None:
        return refused
    if issue is None:
        return NO_ISSUE
    if step_ == Step.RESTS:
        return resting(issue, rests_seconds)
    if step_ == Step.CUT:
        return (
            f"Restarts of the hive cut my turn on #{issue} {tries - 1} times; I run it no"
            " more. Ask me again."
        )
    return f"I know no issue #{issue}."


def unclaimed(issue: int | None) -> str:
    """The answer of an owed turn no process claimed within UNCLAIMED_SECONDS."""
    return (
        f"No process that runs bees took my turn on #{issue} within"
        f" {UNCLAIMED_SECONDS / 60:.0f} minutes (set HIVE_CHAT where the bees run); ask me again."
    )


def claim_seconds(turn_seconds: float) -> float:
    """How long a claim holds its row: the turn's bound and the slack."""
    return turn_seconds + CLAIM_SLACK_SECONDS


def brief(issue: int, title: str, question: str) -> str:
    """What the turn reads: the person's question about the issue it worked on."""
    return (
        f"A person asks you about issue #{issue} ({title}) in the team's chat room:\n\n"
        f"{question.strip()}\n\n"
        "Answer them in a few sentences, from what you did on this issue. Change no file:"
        " nothing you write here is kept. Your reply is posted in the room as it is.\n"
    )


def reply_of(lines: Sequence[str]) -> str:
    """The reply in a turn's stdout lines: a model's text (its `assistant: ` lines, when
    there are any), else every line (a `command:` agent's output is its reply); never
    an agent's report to the hive (`HIVE-USAGE:` ...)."""
    lines = [line for line in lines if not line.startswith(PROTOCOL_PREFIX)]
    said = [line.removeprefix(ASSISTANT_PREFIX) for line in lines]
    model = [s for line, s in zip(lines, said, strict=True) if line.startswith(ASSISTANT_PREFIX)]
    return "\n".join(model if model else said)


def answer(
    issue: int,
    tries: int,
    outcome: TurnOutcome,
    lines: Sequence[str],
    *,
    refusal: str | None = None,
    at_bound: bool = False,
    exit_code: int | None = None,
) -> str:
    """The bot's answer from its turn's ending: the reply of a turn that finished (with
    a note when it is a second try), else a sentence on how it ended."""
    if at_bound:
        said = f"My turn on #{issue} went past its bound and was stopped; ask me a shorter one."
    elif refusal is not None:
        said = f"The provider refused my turn on #{issue} ({refusal}); ask me again later."
    elif outcome is not TurnOutcome.FINISHED:
        code = "" if exit_code is None else f", exit {exit_code}"
        said = f"My turn on #{issue} ended without an answer ({outcome}{code})."
    else:
        said = reply(reply_of(lines))
    return one_line(f"{AGAIN} {said}") if tries > 1 else said


def not_started(issue: int, why: str) -> str:
    """The answer when the turn could not start."""
    return one_line(f"My turn on #{issue} could not start: {why}")


def refusal(
    issue: int,
    spent_today_usd: float,
    cap_usd: float,
    account: str | None = None,
    balance: int = 0,
) -> str | None:
    """Why a bee's bot runs no turn for `issue` (None: it may). `account` is the issue's
    paying account when credits are on (None: off), `balance` what it holds."""
    if spend_stops(spent_today_usd, cap_usd):
        return (
            f"I run no turn for #{issue}: today's spend ${spent_today_usd:.2f} reached"
            f" HIVE_SPEND_CAP_USD=${cap_usd:.2f}; ask again after 00:00 UTC."
        )
    if account is not None and not may_order(balance):
        state = "is at zero" if balance == 0 else f"is overdrawn by {-balance} tokens"
        return (
            f"I run no turn for #{issue}: its account {account} {state};"
            f" hive credit grant {account} TOKENS lets me answer."
        )
    return None


def reply(text: str | None) -> str:
    """The bot's answer from its turn's reply text, within a message's bound."""
    said = (text or "").strip()
    return one_line(said) if said else SAID_NOTHING
