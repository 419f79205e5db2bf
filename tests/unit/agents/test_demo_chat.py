"""The demo agent's answer in the chat room names the issue and where its work is told."""

import os
import subprocess
import sys


def test_the_demo_agent_answers_where_its_transcript_is():
    env = {**os.environ, "HIVE_ISSUE": "12"}
    done = subprocess.run(
        [sys.executable, "-m", "hive.agents.demo_chat"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == (
        "I am the demo agent: I make the change #12's body asks for and keep no"
        " conversation to answer from. What I did is in `hive logs 12`.\n"
    )
