"""The modes the settings take and the results a check's row holds, as enums.

StrEnum: each value is the word on the wire, in the environment and in the store, so a
row or a variable reads the same as before; the code compares members, not literals.
"""

from __future__ import annotations

from enum import StrEnum


class PublishMode(StrEnum):
    """HIVE_PUBLISH: how accepted work lands."""

    PUSH = "push"
    GITHUB = "github"
    OFF = "off"


class ForgeMode(StrEnum):
    """HIVE_FORGE: where issues come from."""

    LOCAL = "local"
    GITHUB = "github"


class ChatMode(StrEnum):
    """HIVE_CHAT: where the bots talk."""

    OFF = "off"
    MATRIX = "matrix"


class Role(StrEnum):
    """HIVE_ROLE's words: what a process does (one or both)."""

    QUEEN = "queen"
    RUNNER = "runner"


class SandboxMode(StrEnum):
    """HIVE_AGENT_SANDBOX: whether a turn runs confined."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


class NetworkMode(StrEnum):
    """HIVE_AGENT_NETWORK: what a confined turn may reach."""

    OPEN = "open"
    ALLOW = "allow"


class AgentKind(StrEnum):
    """The built-in agents an agent setting names (besides `command:<program>`); OFF
    turns an optional agent (the shaper) off."""

    DEMO = "demo"
    CLAUDE = "claude"
    CODEX = "codex"
    OFF = "off"


class CheckResult(StrEnum):
    """`queen_check.result`: how a check's run ended."""

    PASS = "pass"
    FAIL = "fail"
    TIMEOUT = "timeout"
    ERROR = "error"
