"""POST /hooks/github against the real database: any signed body, of GitHub's shape or
not, is a clear answer, never a 500 and never a traceback (issue 14). A signature only
says who sent it; the body is still read as anything at all."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.forge.github.hooks import PR_EVENTS, Hooks
from hive.http import Surface
from hive.http.routes import Request, Routes
from hive.metrics import HiveMetrics
from hive.store import issues
from tests.unit.surface.test_http_properties import Faults, json_values, texts

pytestmark = pytest.mark.live

SECRET = "a-secret-of-enough-length"
FULL_NAME = "octo/hello"


def routes_on(db) -> Routes:
    hooks = Hooks(db, secret=SECRET, full_name=FULL_NAME, label="hive")
    return Routes(Surface(HiveMetrics().registry, github_hook=hooks.handle), None, 64 * 1024)


def delivery(event: str, body: bytes) -> Request:
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"x-github-event": event, "x-hub-signature-256": signature}
    return Request("POST", "/hooks/github", headers, body)


issue_objects = st.fixed_dictionaries(
    {},
    optional={
        "number": st.integers(-5, 2**40) | json_values,
        "title": texts | json_values,
        "body": texts | json_values,
        "state": st.sampled_from(["open", "closed"]) | json_values,
        "labels": st.lists(st.fixed_dictionaries({"name": st.just("hive") | texts}), max_size=3)
        | json_values,
        "pull_request": json_values,
    },
)
payloads = st.fixed_dictionaries(
    {},
    optional={
        "issue": issue_objects | json_values,
        "repository": st.fixed_dictionaries({"full_name": st.just(FULL_NAME) | texts})
        | json_values,
        "branches": st.lists(st.fixed_dictionaries({"name": st.just("queen-1") | texts}))
        | json_values,
        "check_run": json_values,
        "check_suite": json_values,
        "pull_request": json_values,
    },
)


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({"issue": {"number": "7"}}, "issue.number: expected a whole number from 1 to 2147483647"),
        (
            {"issue": {"number": 2**31}},
            "issue.number: expected a whole number from 1 to 2147483647",
        ),
        ({"issue": {"number": True}}, "issue.number: expected a whole number from 1 to 2147483647"),
        ({"issue": {"number": 7, "title": ["t"]}}, "issue.title: expected a string"),
        ({"issue": {"number": 7, "labels": ["hive"]}}, "issue.labels: expected a list of objects"),
    ],
)
def test_an_issue_not_of_github_s_shape_is_400_and_nothing_is_stored(world, payload, error):
    with Faults() as faults:
        response = routes_on(world.db).answer(delivery("issues", json.dumps(payload).encode()))
    assert (response.status, json.loads(response.body)) == (400, {"error": error})
    assert issues.listing(world.db) == [] and faults.found == []


@pytest.mark.parametrize("event", sorted(PR_EVENTS | {"ping"}))
@pytest.mark.parametrize(
    "payload",
    [
        {"repository": "octo/hello"},
        {"repository": [1]},
        {"check_run": "x", "check_suite": 5},
        {"branches": [1, None, "queen-1"]},
        {"pull_request": {"head": "queen-1"}},
        {"check_suite": {"pull_requests": [1, {"head": []}]}},
    ],
)
def test_a_pull_request_event_of_another_shape_names_no_branch(world, event, payload):
    with Faults() as faults:
        response = routes_on(world.db).answer(delivery(event, json.dumps(payload).encode()))
    assert response.status in (200, 204), response.body
    if response.status == 200:
        assert json.loads(response.body) == {"woken": []}
    assert faults.found == []


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    event=st.sampled_from(sorted(PR_EVENTS | {"issues", "ping"})) | texts,
    payload=payloads | json_values,
)
def test_any_signed_delivery_is_a_clear_answer(world, event, payload):
    with Faults() as faults:
        response = routes_on(world.db).answer(delivery(event, json.dumps(payload).encode()))
    assert response.status in (200, 202, 204, 400), response.body
    assert faults.found == []
