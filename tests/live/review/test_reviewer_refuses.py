"""A branch the reviewer may not judge (a path its boundary refuses, a `..` or `.git`
entry the agent committed, a tree that cannot be written out) is sent back once with the
reason, escalated after two send-backs, and never retried: no retry storm."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.repo import Repo

from hive.actors.reviewer import reviewer as reviewer_module
from hive.git.repo import Checkout
from hive.store import reviews
from tests.live.review.conftest import Finished
from tests.live.review.test_reviewer import CONTAINS, _reviewer, _row

pytestmark = pytest.mark.live


def with_entry(name: bytes) -> Callable[[Repo, int], None]:
    """A commit on queen-<n> whose `docs` also holds an entry `name`: what an agent can
    make with `git hash-object --literally` and `git update-ref`."""

    def craft(repo: Repo, number: int) -> None:
        store = repo.object_store
        ref = f"refs/heads/queen-{number}".encode()
        parent = store[repo.refs[ref]]
        assert isinstance(parent, Commit)
        root = store[parent.tree]
        assert isinstance(root, Tree)
        docs = store[root[b"docs"][1]]
        assert isinstance(docs, Tree)
        blob = Blob.from_string(b"[core]\n\tfsmonitor = touch /tmp/pwned\n")
        store.add_object(blob)
        entries = sorted([*docs.iteritems(), (name, 0o100644, blob.id)])
        raw = b"".join(
            b"%o %s\0" % (mode, n) + bytes.fromhex(sha.decode()) for n, mode, sha in entries
        )
        crafted = Tree.from_raw_string(Tree.type_num, raw)
        store.add_object(crafted)
        root.add(b"docs", 0o040000, crafted.id)
        store.add_object(root)
        commit = Commit()
        commit.tree, commit.parents = root.id, [parent.id]
        commit.author = commit.committer = b"agent <a@example.com>"
        commit.author_time = commit.commit_time = 0
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"agent: crafted\n"
        store.add_object(commit)
        repo.refs[ref] = ObjectID(commit.id)

    return craft


@pytest.mark.parametrize(
    ("name", "reason"), [(b"..", "holds the name '..'"), (b".git", "points into .git")]
)
def test_a_dotdot_or_dotgit_entry_the_agent_committed_is_sent_back_once_with_the_reason(
    db: Any,
    queen_checkout: Checkout,
    finished_work: Callable[..., Finished],
    hive_db_url: str,
    name: bytes,
    reason: str,
) -> None:
    finished_work(1, {"docs/a.md": "x\n"}, [CONTAINS.format("x")], then=with_entry(name))
    reviewer, _, _ = _reviewer(db, queen_checkout)

    decision = reviewer.review(reviews.due(db)[0])

    got = _row(hive_db_url, 1)
    assert decision is not None and got["review_state"] == "sendback"
    assert got["review_note"] == (
        f"the branch carries what its boundary refuses: docs/{name.decode()} {reason}"
    )
    assert got["sendbacks"] == 1
    assert reviews.due(db) == []  # sent back: not reviewed again, not every tick
    assert reviewer.run_once().started == ()


def test_a_branch_carrying_a_path_outside_its_boundary_is_sent_back_naming_it(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(2, {"docs/a.md": "x\n", "README.md": "mine now\n"}, [CONTAINS.format("x")])
    reviewer, _, _ = _reviewer(db, queen_checkout)

    reviewer.review(reviews.due(db)[0])

    got = _row(hive_db_url, 2)
    assert (got["review_state"], got["review_note"]) == (
        "sendback",
        "the branch carries what its boundary refuses: README.md is outside the boundary",
    )


def test_a_refused_branch_sent_back_twice_already_escalates(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(
        3, {"docs/a.md": "x\n"}, [CONTAINS.format("x")], sendbacks=2, then=with_entry(b"..")
    )
    reviewer, _, _ = _reviewer(db, queen_checkout)

    reviewer.review(reviews.due(db)[0])

    got = _row(hive_db_url, 3)
    assert got["review_state"] == "escalate"
    assert got["review_note"].startswith("sent back 2 times and still refused: the branch")


def test_a_tree_that_cannot_be_written_out_is_sent_back_with_the_reason(
    db: Any,
    queen_checkout: Checkout,
    finished_work: Callable[..., Finished],
    hive_db_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the scratch tree's own refusal, for what the boundary's judge might not see
    monkeypatch.setattr(reviewer_module, "refused_paths", lambda *args: ())
    finished_work(4, {"docs/a.md": "x\n"}, [CONTAINS.format("x")], then=with_entry(b".."))
    reviewer, _, _ = _reviewer(db, queen_checkout)

    reviewer.review(reviews.due(db)[0])

    got = _row(hive_db_url, 4)
    assert got["review_state"] == "sendback"
    assert got["review_note"].startswith("the branch's tree cannot be written out: refusing")
