"""`POST /hooks/github`: GitHub's webhook deliveries, checked and acted on at once.

GitHub sends no bearer token: a delivery's authentication is its `X-Hub-Signature-256`,
the HMAC-SHA256 of the raw body under `HIVE_GITHUB_WEBHOOK_SECRET`, compared in constant
time. A delivery without a valid signature is 401 and nothing of it is read. Then:

- `issues`: the issue in the payload is synced (`intake.sync_one`) and the Queen rounds;
- `check_run`, `check_suite`, `status`, `pull_request`, `pull_request_review`: the
  publish job of the `queen-<n>` branch they name is woken (its wait `github:<n>`);
- `ping` and anything else: 204, nothing done.

A delivery for another repository is 202 and ignored. A delivery handled already (its
`X-GitHub-Delivery` seen in the last week) is 200 and changes nothing; an `issues`
payload older than the state its issue last followed is `stale` and changes nothing
(hive/rules/deliveries.py).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hive.forge.github import intake
from hive.rules.branches import branch_issue
from hive.rules.deliveries import DELIVERY_HEADER, DELIVERY_KEEP_DAYS, delivery_id
from hive.services.issues import INT4_MAX
from hive.store import forge, waits
from hive.store.db import Db

log = logging.getLogger("hive.forge")

SIGNATURE_HEADER = "x-hub-signature-256"
EVENT_HEADER = "x-github-event"
WAKE_KEY = "github:{issue}"
BODY_MAX_BYTES = 25 * 1024 * 1024  # GitHub caps a delivery's payload at 25 MB
PR_EVENTS = frozenset({"check_run", "check_suite", "status", "pull_request", "pull_request_review"})


def signature_ok(secret: str, body: bytes, given: str | None) -> bool:
    """Whether `given` (the X-Hub-Signature-256 header) signs `body` under `secret`."""
    if not secret or not given or not given.startswith("sha256="):
        return False
    wanted = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(wanted.encode(), given.strip().encode())


def _at(value: object, key: str) -> Any:
    """`value[key]` where `value` is a JSON object, else None: a signed body of another
    shape than GitHub's is read as naming nothing, not as a fault of the hive's."""
    return value.get(key) if isinstance(value, Mapping) else None


def _items(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def issue_fault(issue: Mapping[str, Any]) -> str | None:
    """What in a delivery's `issue` object is not of GitHub's shape (one line), or None."""
    number = issue.get("number")
    if type(number) is not int or not 1 <= number <= INT4_MAX:
        return f"issue.number: expected a whole number from 1 to {INT4_MAX}"
    for name in ("title", "body", "state"):
        if not isinstance(issue.get(name), str | None):
            return f"issue.{name}: expected a string"
    labels = issue.get("labels")
    if labels is not None and not (
        isinstance(labels, list) and all(isinstance(label, Mapping) for label in labels)
    ):
        return "issue.labels: expected a list of objects"
    return None


def branches_of(event: str, payload: Mapping[str, Any]) -> list[str]:
    """The branches a pull-request-side event is about."""
    found: list[str] = []
    if event == "status":
        found += [str(_at(b, "name") or "") for b in _items(payload.get("branches"))]
    for key in ("check_run", "check_suite"):
        part = payload.get(key)
        suite = _at(part, "check_suite") or part
        found.append(str(_at(suite, "head_branch") or ""))
        for pr in _items(_at(part, "pull_requests")):
            found.append(str(_at(_at(pr, "head"), "ref") or ""))
    found.append(str(_at(_at(payload.get("pull_request"), "head"), "ref") or ""))
    return [b for b in found if b]


@dataclass(frozen=True)
class HookAnswer:
    status: int
    body: Mapping[str, Any]


class Hooks:
    """The handler behind the route; `issues_changed` and `jobs_ready` tell the Queen
    and the job runner (in the Queen's process)."""

    def __init__(
        self,
        db: Db,
        *,
        secret: str,
        full_name: str,
        label: str,
        issues_changed: Callable[[], object] = lambda: None,
        jobs_ready: Callable[[], object] = lambda: None,
        on_refused: Callable[[intake.SyncResult], None] = lambda result: None,
    ) -> None:
        self.db = db
        self._secret = secret
        self.full_name = full_name
        self.label = label
        self.issues_changed = issues_changed
        self.jobs_ready = jobs_ready
        self.on_refused = on_refused

    def __repr__(self) -> str:
        return f"Hooks({self.full_name!r})"  # never the secret

    def handle(self, headers: Mapping[str, str], body: bytes) -> HookAnswer:
        """One delivery: its status and a small JSON answer."""
        lower = {k.lower(): v for k, v in headers.items()}
        if not signature_ok(self._secret, body, lower.get(SIGNATURE_HEADER)):
            return HookAnswer(401, {"error": "X-Hub-Signature-256 does not sign this body"})
        event = lower.get(EVENT_HEADER, "")
        try:
            payload = json.loads(body)
        except ValueError:
            return HookAnswer(400, {"error": "the body is not JSON"})
        if not isinstance(payload, dict):
            return HookAnswer(400, {"error": "the body is not a JSON object"})
        delivery = delivery_id(lower.get(DELIVERY_HEADER))
        if delivery is not None and forge.delivery_seen(self.db, delivery):
            return HookAnswer(200, {"ignored": f"delivery {delivery} was handled already"})
        answer = self._act(event, payload)
        if delivery is not None and answer.status < 300:
            forge.record_delivery(self.db, delivery, DELIVERY_KEEP_DAYS)
        return answer

    def _act(self, event: str, payload: dict[str, Any]) -> HookAnswer:
        repo = _at(payload.get("repository"), "full_name")
        if repo is not None and str(repo).lower() != self.full_name.lower():
            return HookAnswer(202, {"ignored": f"a delivery for {repo}"})
        if event == "issues" and isinstance(payload.get("issue"), dict):
            fault = issue_fault(payload["issue"])
            if fault is not None:
                return HookAnswer(400, {"error": fault})
            done = intake.sync_one(self.db, payload["issue"], self.label)
            if done.did == intake.Synced.REFUSED:
                self.on_refused(done)
            if done.did not in (intake.Synced.SAME, intake.Synced.IGNORED, intake.Synced.STALE):
                self.issues_changed()
            return HookAnswer(200, {"issue": done.number, "synced": done.did.value})
        if event in PR_EVENTS:
            woken = self._wake(branches_of(event, payload))
            return HookAnswer(200, {"woken": woken})
        return HookAnswer(204, {})

    def _wake(self, branches: Iterable[str]) -> list[int]:
        woken = []
        for issue in sorted({n for n in map(branch_issue, branches) if n is not None}):
            if waits.resolve(self.db, WAKE_KEY.format(issue=issue)):
                woken.append(issue)
        if woken:
            self.jobs_ready()
        return woken
