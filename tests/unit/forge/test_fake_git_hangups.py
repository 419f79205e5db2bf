"""The fake GitHub's git endpoint counts a request as its own failure only when its
client did not hang up: a pusher killed or timed out mid-push breaks the pipe the
answer is written to (`hive chaos --forge github` in `make test` once failed on such a
push, "[Errno 32] Broken pipe", taken for the fake's)."""

from __future__ import annotations

import socket

import pytest
from dulwich.errors import GitProtocolError
from dulwich.protocol import Protocol

from tests.fakes.fake_github import went_away


def _written_to_a_closed_peer() -> GitProtocolError:
    """What dulwich raises writing its answer to a client that hung up."""
    ours, theirs = socket.socketpair()
    theirs.close()
    proto = Protocol(ours.recv, ours.sendall)
    try:
        with pytest.raises(GitProtocolError) as raised:
            for _ in range(64):  # the first write may still fit the socket's buffer
                proto.write_pkt_line(b"ok refs/heads/queen-1\n" * 1000)
    finally:
        ours.close()
    return raised.value


def test_a_client_that_hung_up_is_not_the_endpoints_failure() -> None:
    err = _written_to_a_closed_peer()
    assert isinstance(err.__cause__, BrokenPipeError | ConnectionResetError)
    assert went_away(err)
    assert went_away(ConnectionResetError()) and went_away(BrokenPipeError())


def test_an_endpoints_own_failure_is_counted() -> None:
    assert not went_away(GitProtocolError("Invalid pkt-line length: 0001"))
    assert not went_away(OSError("pack file disappeared"))
    assert not went_away(GitProtocolError("[Errno 32] Broken pipe"))  # no cause: not said
