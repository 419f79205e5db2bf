"""What must hold for every input, not only for the cards' vectors (hypothesis)."""

import itertools
import posixpath

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hive.rules.drain import (
    DV_DONE,
    DV_HAND_BACK,
    DV_HOLD,
    DV_LEAVE,
    DV_STOP,
    EXIT_SECONDS,
    HAND_BACK_SECONDS,
    WORK_KINDS,
    drain_cap_seconds,
    drain_verdict,
    row_keeps,
)
from hive.rules.leases import Lease, claim, release
from hive.rules.priority import (
    CRITICAL,
    CRITICAL_CAP,
    HIGH,
    LABELS,
    Candidate,
    label_level,
    rank,
)
from hive.rules.shape import plain_path, resolve, shape_problem
from hive.rules.states import EVENTS, ILLEGAL, STATES, next_state

FEW = settings(max_examples=200, deadline=None)
# small values first: the edges of the card (25 s, 1800 s) live there, not near 2**32
U32 = st.one_of(st.integers(0, 2000), st.integers(min_value=0, max_value=2**32 - 1))


@FEW
@given(runner=U32, platform=U32)
def test_the_cap_never_exceeds_the_runners_drain_nor_the_platforms_minus_25(
    runner: int, platform: int
) -> None:
    cap = drain_cap_seconds(runner, platform)
    assert 0 <= cap <= runner
    if platform > 0:
        assert cap <= max(0, platform - HAND_BACK_SECONDS - EXIT_SECONDS)
        assert HAND_BACK_SECONDS + EXIT_SECONDS == 25
    else:
        assert cap == runner


@FEW
@given(kind=st.integers(-3, WORK_KINDS + 3), ended=st.booleans(), waited=U32, cap=U32)
def test_the_verdict_is_total_and_a_kept_row_is_never_held(
    kind: int, ended: bool, waited: int, cap: int
) -> None:
    verdict = drain_verdict(kind, ended, waited, cap)
    assert verdict in (DV_DONE, DV_LEAVE, DV_STOP, DV_HOLD, DV_HAND_BACK)
    if row_keeps(kind):
        assert verdict in (DV_DONE, DV_LEAVE)
    if verdict == DV_HOLD:
        assert waited < cap
    if ended:
        assert verdict == DV_DONE


@FEW
@given(state=st.integers(-5, 120), event=st.integers(-5, 40))
def test_next_state_never_leaves_the_table(state: int, event: int) -> None:
    after = next_state(state, event)
    assert after == ILLEGAL or 0 <= after < STATES
    if not (0 <= state < STATES and 0 <= event < EVENTS):
        assert after == ILLEGAL


LABEL = st.sampled_from([*LABELS, "bug", "docs"])
CANDIDATES = st.lists(
    st.builds(
        Candidate,
        number=st.integers(1, 10_000),
        labels=st.lists(LABEL, max_size=3).map(tuple),
        age_seconds=st.integers(0, 60 * 86400),
    ),
    max_size=12,
    unique_by=lambda c: c.number,
)


@FEW
@given(candidates=CANDIDATES, running_critical=st.integers(0, 5))
def test_the_order_is_total_and_never_lets_a_fourth_critical_run_as_critical(
    candidates: list[Candidate], running_critical: int
) -> None:
    ranked = rank(candidates, running_critical)
    assert sorted(r.number for r in ranked) == sorted(c.number for c in candidates)
    keys = [r.sort_key() for r in ranked]
    # strictly increasing: no two candidates tie, so the order is total and the same each time
    assert all(a < b for a, b in itertools.pairwise(keys))
    assert rank(list(reversed(candidates)), running_critical) == ranked
    criticals = [r.number for r in ranked if r.level == CRITICAL]
    assert len(criticals) <= max(0, CRITICAL_CAP - running_critical)
    # the criticals that run as critical are the first ones in listing order
    labelled_critical = sorted(c.number for c in candidates if label_level(c.labels) == CRITICAL)
    assert sorted(criticals) == labelled_critical[: len(criticals)]
    assert all(
        r.level == HIGH and not r.aged
        for r in ranked
        if r.number in labelled_critical and r.number not in criticals
    )


SEGMENT = st.sampled_from(["a", "b", "src", "..", ".", "", "link", "up", "x.py"])
PATH = st.lists(SEGMENT, min_size=1, max_size=5).map("/".join)
TARGET = st.sampled_from(["..", "../..", "src", "a/..", "/etc", "b/../..", ".", "link", "up/a"])
LINK_NAME = st.sampled_from(["link", "up", "a/link", "src/up", "b"])


@FEW
@example(path="src/x.py", links={}, absolute=False)
@example(path="link/x.py", links={"link": "src"}, absolute=False)
@example(path="src/up/x.py", links={"src/up": ".."}, absolute=False)
@given(path=PATH, links=st.dictionaries(LINK_NAME, TARGET, max_size=4), absolute=st.booleans())
def test_a_boundary_path_never_escapes_the_repository(
    path: str, links: dict[str, str], absolute: bool
) -> None:
    path = "/" + path if absolute else path
    files = frozenset({"a", "b", "x.py", "src/x.py", "a/x.py"})
    dirs = frozenset({"src", "a", "b"})
    if shape_problem((), [path], path, files, dirs, links) is not None:
        return  # refused: nothing to check
    plain = plain_path(path)
    assert isinstance(plain, str)
    real = resolve(plain, links)
    assert real is not None
    assert not path.startswith("/")
    assert ".." not in path.split("/")
    normal = posixpath.normpath(real)
    assert not normal.startswith("/")
    assert normal != ".." and not normal.startswith("../")


OPS = st.lists(
    st.tuples(
        st.sampled_from(["claim", "release"]),
        st.sampled_from(["a", "b"]),
        st.integers(0, 400),
        st.booleans(),
    ),
    max_size=20,
)


@FEW
@given(ops=OPS)
def test_the_fence_never_goes_back_and_every_landed_claim_bumps_it(
    ops: list[tuple[str, str, int, bool]],
) -> None:
    lease = Lease(None, 0, 0)
    now = 0
    for op, who, step, stale in ops:
        now += step
        before = lease
        if op == "release":
            lease = release(lease, who, now)
            assert lease.fence == before.fence
            continue
        got = claim(lease, who, lease.fence - 1 if stale else lease.fence, now)
        if got is None:
            assert stale or (before.holder not in (None, who) and now < before.expires_at_seconds)
            continue
        assert not stale
        assert got.fence == before.fence + 1
        assert got.holder == who
        lease = got
