"""The demo agent's answer in the chat room, with no model and no key.

It runs as `python -m hive.agents.demo_chat` through the command adapter, in the scratch
tree of a bee's bot's turn, and prints one line: the demo agent keeps no conversation,
so it says what it does and where the issue's transcript is (HIVE_ISSUE).
"""

from __future__ import annotations

import os


def answer(issue: str) -> str:
    return (
        f"I am the demo agent: I make the change #{issue}'s body asks for and keep no"
        f" conversation to answer from. What I did is in `hive logs {issue}`."
    )


def main() -> int:
    print(answer(os.environ.get("HIVE_ISSUE", "?")), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
