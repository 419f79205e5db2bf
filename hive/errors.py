"""The errors a user sees: one clear line on stderr and a non-zero exit (DESIGN 8)."""


class HiveError(Exception):
    """A problem the user can act on. `str()` is the one line the CLI prints."""

    exit_code = 1


class UsageError(HiveError):
    """Bad input on the command line or in the environment."""

    exit_code = 2


class StoreUnreachable(HiveError):
    """The database cannot be reached; the message names host and port, never a password."""

    exit_code = 2
