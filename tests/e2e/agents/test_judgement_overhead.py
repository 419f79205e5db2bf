"""What judgement adds per issue (DESIGN 11, docs/benchmarks.md "judgement"): on the
fake Responses API with the REAL Codex CLI, a bee's turn, a whole review (bundle
imported, scratch tree, diff and brief, the turn, verdict and spend written) and a
whole shaping (scratch tree of the base, the turn, the proposal checked and written),
each timed from start to its row; `JUDGEMENT_ROUNDS` rounds (default 2), interleaved.
The figures print as one JSON line (`pytest -s`)."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hive.actors.bee.ending import Accounting
from hive.actors.reviewer.config import ReviewerConfig
from hive.actors.reviewer.reviewer import Reviewer
from hive.actors.shaper import Shaper
from hive.agents import TurnContext, start_turn
from hive.agents.launch import Launch
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from hive.rules.keys import key_slots
from hive.store import issues, reviews, shapes
from hive.store.issues import NewIssue
from tests.live.review.conftest import Finished, db, finished_work, queen_checkout  # noqa: F401

from .fake_responses import FakeResponses
from .test_codex import codex  # noqa: F401
from .test_model_reviewer import KEY, responses  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.live]

ROUNDS = int(os.environ.get("JUDGEMENT_ROUNDS", "2"))
CRITERIA = ["file `docs/notes.md` contains `hello`", "the greeting is friendly"]


def test_a_review_and_a_shaping_cost_about_a_bee_turn_on_the_fake(
    db: Any,  # noqa: F811
    queen_checkout: Checkout,  # noqa: F811
    finished_work: Callable[..., Finished],  # noqa: F811
    codex: Path,  # noqa: F811
    responses: FakeResponses,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", responses.url)
    launch = Launch(pass_env=("OPENAI_BASE_URL",), agent_bin=str(codex))
    config = ReviewerConfig(
        agent="codex",
        keys=key_slots({"HIVE_WORKER_KEY": KEY}),
        launch=launch,
        accounting=Accounting.packaged(),
    )
    reviewer = Reviewer(db, queen_checkout, HiveMetrics(), lambda item: lambda: None, config)
    shaper = Shaper(db, queen_checkout, HiveMetrics(), "codex", "ask", config)
    bee_ms: list[float] = []
    review_ms: list[float] = []
    shape_ms: list[float] = []
    bee_bytes: list[int] = []
    review_bytes: list[int] = []
    shape_bytes: list[int] = []
    for n in range(1, ROUNDS + 1):
        responses.play(("text", "done"))
        worktree = tmp_path / f"wt-{n}"
        worktree.mkdir()
        asked = len(responses.requests)
        began = time.monotonic()
        turn = start_turn(
            "codex",
            TurnContext(
                issue=n,
                title="t",
                body="",
                branch=f"queen-{n}",
                boundary=("docs/a.md",),
                brief="write docs/a.md",
                worktree=worktree,
                key=KEY,
                launch=launch,
            ),
        )
        assert turn.wait(90) and turn.outcome == "finished"
        bee_ms.append((time.monotonic() - began) * 1000)
        bee_bytes.append(len(json.dumps(responses.requests[asked:])))

        finished_work(
            10 * n, {"docs/notes.md": "hello world\n"}, CRITERIA, boundary=("docs/notes.md",)
        )
        responses.play(("text", "HIVE-CRITERION: 1 met\nHIVE-CRITERION: 2 met"))
        asked = len(responses.requests)
        began = time.monotonic()
        (row,) = reviews.due(db)
        reviewer.review(row)
        review_ms.append((time.monotonic() - began) * 1000)
        review_bytes.append(len(json.dumps(responses.requests[asked:])))

        number = issues.create(db, NewIssue(title="French", body="greet in French")).number
        lines = "HIVE-SHAPE-BOUNDARY: docs/french.md\nHIVE-SHAPE-CRITERION: it says bonjour"
        responses.play(("text", lines))
        asked = len(responses.requests)
        began = time.monotonic()
        assert shaper.run_once().issue == number
        shape_ms.append((time.monotonic() - began) * 1000)
        shape_bytes.append(len(json.dumps(responses.requests[asked:])))
        shape = shapes.get(db, number)
        assert shape is not None and shape.state == shapes.PENDING
    figures = {
        "rounds": ROUNDS,
        "bee_turn_p50_ms": round(statistics.median(bee_ms)),
        "review_p50_ms": round(statistics.median(review_ms)),
        "shaping_p50_ms": round(statistics.median(shape_ms)),
        "bee_request_bytes_p50": round(statistics.median(bee_bytes)),
        "review_request_bytes_p50": round(statistics.median(review_bytes)),
        "shaping_request_bytes_p50": round(statistics.median(shape_bytes)),
    }
    print("JUDGEMENT " + json.dumps(figures))
    assert figures["review_p50_ms"] > 0 and figures["shaping_p50_ms"] > 0
