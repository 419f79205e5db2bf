"""A fake GitHub for the tests, started on 127.0.0.1: the REST subset the forge uses,
webhooks signed as GitHub signs them, and a git smart-HTTP endpoint (dulwich.web).

Response shapes follow GitHub's REST documentation (issues, comments, pulls, merge,
check runs, the combined status, rate-limit headers, ETag / 304, Link pagination). A
request without a User-Agent is refused (403) and one without the token is 401, as
GitHub does. Faults are injected by the tests: `fail_next(status, headers, message)`
answers the next requests with them; `permissions` lists what the token may do.

    with FakeGitHub(token="t0ken") as gh:
        gh.add_issue("Add a greeting", body, labels=["hive"])
        api_url = gh.api_url   # http://127.0.0.1:PORT/api/v3
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs, urlencode
from wsgiref.simple_server import WSGIServer, make_server

from dulwich.errors import GitProtocolError, HangupException
from dulwich.graph import can_fast_forward
from dulwich.repo import Repo
from dulwich.server import DictBackend
from dulwich.web import WSGIRequestHandlerLogger, make_wsgi_chain

from hive.git.merge import Conflict, merge

PER_PAGE_DEFAULT = 30
RATE_LIMIT = 5000
BASE_MODIFIED = "Base branch was modified. Review and try the merge again."
# Each permission a route needs (fine-grained names, as x-accepted-github-permissions).
NEEDS = {
    "issues:read": "issues=read",
    "issues:write": "issues=write",
    "pulls:read": "pull_requests=read",
    "pulls:write": "pull_requests=write",
    "contents:read": "contents=read",
    "contents:write": "contents=write",
    "checks:read": "checks=read",
    "statuses:read": "statuses=read",
    "metadata:read": "metadata=read",
}
ALL_PERMISSIONS = frozenset(NEEDS)


@dataclass
class Fault:
    status: int
    headers: dict[str, str]
    message: str


@dataclass
class State:
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    check_runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    next_number: int = 1
    next_id: int = 1000


class _Threading(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandlerLogger):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def went_away(err: BaseException) -> bool:
    """Whether a git request failed because its client hung up in the middle (a pusher
    killed, or one that gave up): writing to it broke the pipe or it reset the
    connection. Such a request failed on the client's side, not the endpoint's."""
    gone = (BrokenPipeError, ConnectionResetError)
    if isinstance(err, (HangupException, *gone)):
        return True
    return isinstance(err, GitProtocolError) and isinstance(err.__cause__, gone)


class FakeGitHub:
    """See the module. `calls` lists (method, path, status) of every API request;
    `rate_used` counts the requests that cost rate limit (a 304 costs none)."""

    def __init__(
        self,
        repo_path: Path,
        *,
        token: str = "fake-token",
        full_name: str = "octo/hello",
        base: str = "main",
    ) -> None:
        self.repo_path = Path(repo_path)
        self.token = token
        self.full_name = full_name
        self.base = base
        self.state = State()
        self.lock = threading.RLock()
        self.calls: list[tuple[str, str, int]] = []
        self.seen_headers: list[dict[str, str]] = []
        self.rate_used = 0
        self.permissions = set(ALL_PERMISSIONS)
        self.faults: list[Fault] = []
        self.hook_url: str | None = None
        self.hook_secret = ""
        self.deliveries: list[tuple[str, int]] = []
        self.merge_methods: list[str] = []
        # the repository's CI: called with (branch, sha) for each new head pushed to a
        # queen-* branch, answers the check runs it reports [(name, conclusion, summary)]
        self.ci: Callable[[str, str], list[tuple[str, str | None, str]]] | None = None
        self.pr_opened_at: dict[int, float] = {}
        self.link_base: str | None = None  # where a Link header points (default: here)
        # "review", "protected", "conflict", "stale", "behind", "draft", "computing"
        self.block_merge: str | None = None
        self.block_heads: dict[str, str] = {}  # the same, for the pull requests of one branch
        # the next requests' answers are held this many seconds each (a timeout), after
        # the request has done what it does
        self.delays: list[tuple[float, str, str]] = []  # (seconds, method, path's end)
        self.sent: list[tuple[str, str, dict[str, Any]]] = []  # (event, delivery, payload)
        self.unreachable_ok = False
        self.closed_issues: list[int] = []  # each open -> closed of an issue, in order
        self.git_errors: list[str] = []  # what each git request that failed raised (a 500)
        self.git_hangups: list[str] = []  # git requests whose client hung up midway
        self.reset_epoch = int(time.time()) + 3600
        self.remaining = RATE_LIMIT
        self._server = make_server(
            "127.0.0.1", 0, self._app, server_class=_Threading, handler_class=_Quiet
        )
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # ---- life ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/v3"

    @property
    def clone_url(self) -> str:
        return f"{self.url}/{self.full_name}.git"

    def __enter__(self) -> FakeGitHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # ---- what a test does ---------------------------------------------------------

    def add_issue(
        self, title: str, body: str = "", labels: Iterable[str] = ("hive",), *, hook: bool = True
    ) -> int:
        with self.lock:
            number = self._next_number()
            self.state.issues[number] = {
                "id": self._next_id(),
                "number": number,
                "title": title,
                "body": body,
                "state": "open",
                "state_reason": None,
                "labels": [self._label(name) for name in labels],
                "user": {"login": "someone", "id": 1},
                "comments": 0,
                "created_at": _now(),
                "updated_at": _now(),
                "closed_at": None,
                "html_url": f"{self.url}/{self.full_name}/issues/{number}",
                "url": f"{self.api_url}/repos/{self.full_name}/issues/{number}",
            }
        if hook:
            self.deliver("issues", {"action": "opened", "issue": self.state.issues[number]})
        return number

    def edit_issue(self, number: int, *, hook: bool = True, **changes: Any) -> None:
        with self.lock:
            issue = self.state.issues[number]
            if "labels" in changes:
                changes["labels"] = [self._label(name) for name in changes["labels"]]
            issue.update(changes, updated_at=_now())
        if hook:
            self.deliver("issues", {"action": "edited", "issue": issue})

    def set_check(
        self, sha: str, name: str, conclusion: str | None, summary: str = "", *, hook: bool = True
    ) -> None:
        """A check run on `sha`: conclusion None is still running."""
        with self.lock:
            run = {
                "id": self._next_id(),
                "name": name,
                "head_sha": sha,
                "status": "in_progress" if conclusion is None else "completed",
                "conclusion": conclusion,
                "output": {"title": name, "summary": summary, "text": None},
                "html_url": f"{self.url}/{self.full_name}/runs/{name}",
                "app": {"slug": "fake-ci"},
                "check_suite": {"head_branch": self._branch_of(sha)},
                "pull_requests": [],
            }
            self.state.check_runs.setdefault(sha, []).append(run)
        if hook:
            self.deliver("check_run", {"action": "completed", "check_run": run})

    def set_status(self, sha: str, context: str, state: str, description: str = "") -> None:
        with self.lock:
            self.state.statuses.setdefault(sha, []).insert(
                0,
                {
                    "id": self._next_id(),
                    "context": context,
                    "state": state,
                    "description": description,
                    "target_url": None,
                    "created_at": _now(),
                },
            )

    def fail_next(
        self, status: int, headers: dict[str, str] | None = None, message: str = "", times: int = 1
    ) -> None:
        with self.lock:
            self.faults += [Fault(status, dict(headers or {}), message)] * times

    def deliver(
        self, event: str, payload: dict[str, Any], *, delivery: str | None = None
    ) -> int | None:
        """POST `payload` as GitHub would to the registered hook; its status, or None.
        `delivery` is its X-GitHub-Delivery (default: a new one; the same one again is
        GitHub's "Redeliver"). With `unreachable_ok`, a hook nobody answers is recorded
        with status 0 (GitHub's failed delivery) instead of raising."""
        if self.hook_url is None:
            return None
        payload = {**payload, "repository": self._repository(), "sender": {"login": "someone"}}
        delivery = delivery or f"delivery-{self._next_id()}"
        self.sent.append((event, delivery, payload))
        body = json.dumps(payload).encode()
        signature = hmac.new(self.hook_secret.encode(), body, hashlib.sha256).hexdigest()
        request = urllib.request.Request(
            self.hook_url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": "GitHub-Hookshot/fake",
                "X-GitHub-Event": event,
                "X-GitHub-Delivery": delivery,
                "X-Hub-Signature-256": f"sha256={signature}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status = int(response.status)
        except urllib.error.HTTPError as err:
            status = err.code
        except (OSError, http.client.HTTPException):  # nobody there, or gone mid-answer
            if not self.unreachable_ok:
                raise
            status = 0
        self.deliveries.append((event, status))
        return status

    def person_merges(self, number: int) -> str:
        """A person merges pull request `number` on GitHub; the merge commit's sha."""
        with self.lock:
            status, body, _ = self._merged(self.state.pulls[number], None, "merge")
        assert status == 200, body
        return str(body["sha"])

    def person_commits(self, branch: str, path: str, text: str) -> str:
        """A person pushes a commit onto `branch` that writes `text` to `path`; its sha."""
        from dulwich.object_store import commit_tree_changes
        from dulwich.objects import Blob, Commit

        with self.lock, Repo(str(self.repo_path)) as repo:
            ref = f"refs/heads/{branch}".encode()
            parent = repo[repo.refs[ref]]
            blob = Blob.from_string(text.encode())
            repo.object_store.add_object(blob)
            tree = commit_tree_changes(
                repo.object_store, parent.tree, [(path.encode(), 0o100644, blob.id)]
            )
            commit = Commit()
            commit.tree, commit.parents = tree, [parent.id]
            commit.author = commit.committer = b"a person <person@example.invalid>"
            commit.author_time = commit.commit_time = int(time.time())
            commit.author_timezone = commit.commit_timezone = 0
            commit.message = f"a person's change to {path}\n".encode()
            repo.object_store.add_object(commit)
            repo.refs[ref] = commit.id
            return commit.id.decode()

    def delay_next(
        self, seconds: float, times: int = 1, *, method: str = "", path_end: str = ""
    ) -> None:
        """The next `times` API answers (to `method` on a path ending `path_end`, when
        given) wait `seconds` first; the request itself is done."""
        with self.lock:
            self.delays += [(seconds, method, path_end)] * times

    def person_closes(self, number: int) -> None:
        """A person closes pull request `number` without merging it."""
        with self.lock:
            self.state.pulls[number]["state"] = "closed"

    def delete_branch(self, branch: str) -> None:
        """A person deletes `branch`; GitHub closes the open pull requests from it."""
        with self.lock, Repo(str(self.repo_path)) as repo:
            ref = f"refs/heads/{branch}".encode()
            last = repo.refs[ref].decode()
            del repo.refs[ref]
            for pr in self.state.pulls.values():
                if pr["head_ref"] == branch and pr["state"] == "open":
                    pr.update(state="closed", last_head=last)  # GitHub keeps its head sha

    def base_sha(self) -> str:
        with Repo(str(self.repo_path)) as repo:
            return repo.refs[f"refs/heads/{self.base}".encode()].decode()

    def branch_sha(self, branch: str) -> str | None:
        with Repo(str(self.repo_path)) as repo:
            ref = f"refs/heads/{branch}".encode()
            return repo.refs[ref].decode() if ref in repo.refs else None

    def api_calls(self) -> int:
        return len(self.calls)

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        with self.lock:
            return [c for c in self.state.comments.values() if c["issue"] == number]

    # ---- the server ---------------------------------------------------------------

    def _app(self, environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path.startswith(f"/{self.full_name}.git"):
            if not self._git_auth(environ):
                start(
                    "401 Unauthorized",
                    [("WWW-Authenticate", 'Basic realm="GitHub"'), ("Content-Length", "0")],
                )
                return [b""]
            # a repository of its own for each request, as each of GitHub's git processes
            # has: dulwich's Repo is not thread-safe, and one shared by the request threads
            # kept packs in its cache that another request had closed or removed (pushes
            # answered 500 with PackFileDisappeared: 36 in a 90-issue chaos run)
            try:
                with Repo(str(self.repo_path)) as repo:
                    git = make_wsgi_chain(DictBackend({f"/{self.full_name}.git": repo}))
                    answer = list(git(environ, start))
            except Exception as err:
                if went_away(err):  # its client hung up (killed, or gave up): not ours
                    self.git_hangups.append(f"{path}: {err!r}")
                else:
                    self.git_errors.append(f"{path}: {err!r}")
                raise
            if path.endswith("/git-receive-pack") and self.ci is not None:
                self._run_ci()
            return answer
        status, headers, body = self._api(environ)
        reason = {200: "OK", 201: "Created", 204: "No Content", 304: "Not Modified"}
        start(f"{status} {reason.get(status, 'Error')}", list(headers.items()))
        return [body]

    def _run_ci(self) -> None:
        assert self.ci is not None
        with Repo(str(self.repo_path)) as repo:
            heads = {
                ref[len(b"refs/heads/") :].decode(): sha.decode()
                for ref, sha in repo.get_refs().items()
                if ref.startswith(b"refs/heads/queen-")
            }
        for branch, sha in sorted(heads.items()):
            with self.lock:
                if sha in self.state.check_runs:
                    continue
                self.state.check_runs[sha] = []
            for name, conclusion, summary in self.ci(branch, sha):
                self.set_check(sha, name, conclusion, summary)

    def _git_auth(self, environ: dict[str, Any]) -> bool:
        import base64

        given = environ.get("HTTP_AUTHORIZATION", "")
        if not given.startswith("Basic "):
            return False
        user, _, password = base64.b64decode(given[6:]).decode().partition(":")
        return password == self.token or user == self.token

    def _api(self, environ: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO", "")
        query = {k: v[-1] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        got = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k[:5] == "HTTP_"}
        with self.lock:
            self.seen_headers.append(got)
            status, headers, body = self._answer(method, path, query, raw, got)
            delay = 0.0
            for k, (seconds, verb, end) in enumerate(self.delays):
                if verb in ("", method) and path.endswith(end):
                    delay = seconds
                    del self.delays[k]
                    break
            self.calls.append((method, path, status))
            if status != 304:
                self.rate_used += 1
                self.remaining = max(self.remaining - 1, 0)
            headers.setdefault("x-ratelimit-limit", str(RATE_LIMIT))
            headers.setdefault("x-ratelimit-remaining", str(self.remaining))
            headers.setdefault("x-ratelimit-reset", str(self.reset_epoch))
            headers.setdefault("x-ratelimit-resource", "core")
        data = b"" if body is None else json.dumps(body).encode()
        if status == 304:
            data = b""
        headers["Content-Type"] = "application/json; charset=utf-8"
        headers["Content-Length"] = str(len(data))
        if delay:
            time.sleep(delay)  # the caller has given up by now: the answer goes nowhere
        return status, headers, data

    def _answer(
        self, method: str, path: str, query: dict[str, str], raw: bytes, got: dict[str, str]
    ) -> tuple[int, dict[str, str], Any]:
        if not got.get("user-agent"):
            return (
                403,
                {},
                {
                    "message": "Request forbidden by administrative rules. "
                    "Please make sure your request has a User-Agent header"
                },
            )
        if got.get("authorization") not in (f"Bearer {self.token}", f"token {self.token}"):
            return 401, {}, {"message": "Bad credentials"}
        if self.faults:
            fault = self.faults.pop(0)
            return fault.status, dict(fault.headers), {"message": fault.message}
        prefix = f"/api/v3/repos/{self.full_name}"
        if not path.startswith(prefix):
            return 404, {}, {"message": "Not Found"}
        rest = path[len(prefix) :]
        body = json.loads(raw) if raw else {}
        for pattern, verb, need, handler in self._routes():
            match = re.fullmatch(pattern, rest)
            if match and verb == method:
                if need not in self.permissions:
                    return (
                        403,
                        {"x-accepted-github-permissions": NEEDS[need]},
                        {"message": "Resource not accessible by personal access token"},
                    )
                status, value, extra = handler(match, query, body)
                return self._conditional(status, value, extra, query, got, path)
        return 404, {}, {"message": "Not Found"}

    def _conditional(
        self,
        status: int,
        value: Any,
        extra: dict[str, str],
        query: dict[str, str],
        got: dict[str, str],
        path: str,
    ) -> tuple[int, dict[str, str], Any]:
        headers = dict(extra)
        if isinstance(value, list) and status == 200:
            per_page = int(query.get("per_page", PER_PAGE_DEFAULT))
            page = int(query.get("page", "1"))
            pages = max((len(value) + per_page - 1) // per_page, 1)
            if page < pages:
                nxt = urlencode({**query, "page": page + 1})
                last = urlencode({**query, "page": pages})
                base = self.link_base or self.url
                headers["Link"] = (
                    f'<{base}{path}?{nxt}>; rel="next", <{base}{path}?{last}>; rel="last"'
                )
            value = value[(page - 1) * per_page : page * per_page]
        if status == 200:
            etag = '"' + hashlib.sha256(json.dumps(value).encode()).hexdigest()[:32] + '"'
            headers["ETag"] = etag
            if got.get("if-none-match") == etag:
                return 304, headers, None
        return status, headers, value

    def _routes(self) -> list[tuple[str, str, str, Callable[..., Any]]]:
        return [
            (r"", "GET", "metadata:read", self._repo_get),
            (r"/issues", "GET", "issues:read", self._issues_list),
            (r"/issues", "POST", "issues:write", self._issue_create),
            (r"/issues/(\d+)", "GET", "issues:read", self._issue_get),
            (r"/issues/(\d+)", "PATCH", "issues:write", self._issue_patch),
            (r"/issues/(\d+)/comments", "GET", "issues:read", self._comments_list),
            (r"/issues/(\d+)/comments", "POST", "issues:write", self._comment_create),
            (r"/issues/comments/(\d+)", "PATCH", "issues:write", self._comment_patch),
            (r"/pulls", "GET", "pulls:read", self._pulls_list),
            (r"/pulls", "POST", "pulls:write", self._pull_create),
            (r"/pulls/(\d+)", "GET", "pulls:read", self._pull_get),
            (r"/pulls/(\d+)", "PATCH", "pulls:write", self._pull_patch),
            (r"/pulls/(\d+)/merge", "PUT", "contents:write", self._pull_merge),
            (r"/branches/([^/]+)", "GET", "contents:read", self._branch_get),
            (r"/compare/([^/.]+)\.\.\.([^/.]+)", "GET", "contents:read", self._compare),
            (r"/commits/([^/]+)/check-runs", "GET", "checks:read", self._check_runs),
            (r"/commits/([^/]+)/status", "GET", "statuses:read", self._status),
        ]

    # ---- routes -------------------------------------------------------------------

    def _repository(self) -> dict[str, Any]:
        owner, name = self.full_name.split("/")
        return {
            "id": 1,
            "name": name,
            "full_name": self.full_name,
            "owner": {"login": owner},
            "default_branch": self.base,
            "clone_url": self.clone_url,
            "html_url": f"{self.url}/{self.full_name}",
        }

    def _repo_get(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        return 200, self._repository(), {}

    def _issues_list(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        want = q.get("state", "open")
        labels = [s for s in q.get("labels", "").split(",") if s]
        found = []
        for issue in sorted(self.state.issues.values(), key=lambda i: -i["number"]):
            if want != "all" and issue["state"] != want:
                continue
            names = {label["name"] for label in issue["labels"]}
            if any(label not in names for label in labels):
                continue
            if q.get("since") and issue["updated_at"] < q["since"]:
                continue
            found.append(issue)
        return 200, found, {}

    def _issue_create(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        if not b.get("title"):
            return 422, {"message": "Validation Failed"}, {}
        number = self.add_issue(b["title"], b.get("body") or "", b.get("labels", []), hook=False)
        return 201, self.state.issues[number], {}

    def _issue_get(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        issue = self.state.issues.get(int(m.group(1)))
        return (200, issue, {}) if issue else (404, {"message": "Not Found"}, {})

    def _issue_patch(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        issue = self.state.issues.get(int(m.group(1)))
        if issue is None:
            return 404, {"message": "Not Found"}, {}
        was = issue["state"]
        for key in ("title", "body", "state", "state_reason"):
            if key in b:
                issue[key] = b[key]
        if b.get("state") == "closed":
            issue["closed_at"] = _now()
            if was == "open":
                self.closed_issues.append(issue["number"])
        issue["updated_at"] = _now()
        return 200, issue, {}

    def _comments_list(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        return 200, self.comments_on(int(m.group(1))), {}

    def _comment_create(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        number = int(m.group(1))
        if number not in self.state.issues:
            return 404, {"message": "Not Found"}, {}
        cid = self._next_id()
        comment = {
            "id": cid,
            "issue": number,
            "body": b.get("body", ""),
            "user": {"login": "hive-bot"},
            "created_at": _now(),
            "updated_at": _now(),
            "html_url": f"{self.url}/{self.full_name}/issues/{number}#issuecomment-{cid}",
        }
        self.state.comments[cid] = comment
        self.state.issues[number]["comments"] += 1
        return 201, comment, {}

    def _comment_patch(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        comment = self.state.comments.get(int(m.group(1)))
        if comment is None:
            return 404, {"message": "Not Found"}, {}
        comment.update(body=b.get("body", ""), updated_at=_now())
        return 200, comment, {}

    def _pulls_list(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        want = q.get("state", "open")
        head = q.get("head")
        found = [
            self._pull_view(pr)
            for pr in self.state.pulls.values()
            if (want == "all" or pr["state"] == want)
            and (head is None or f"{self.full_name.split('/')[0]}:{pr['head_ref']}" == head)
        ]
        return 200, found, {}

    def _pull_create(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        head, base = b.get("head", ""), b.get("base", "")
        if self.branch_sha(head) is None or self.branch_sha(base) is None:
            return 422, {"message": "Validation Failed", "errors": [{"field": "head"}]}, {}
        for pr in self.state.pulls.values():
            if pr["head_ref"] == head and pr["state"] == "open":
                return 422, {"message": f"A pull request already exists for {head}."}, {}
        with Repo(str(self.repo_path)) as repo:
            head_sha, base_sha = self.branch_sha(head), self.branch_sha(base)
            if can_fast_forward(repo, str(head_sha).encode(), str(base_sha).encode()):
                message = f"No commits between {base} and {head}"
                return 422, {"message": "Validation Failed", "errors": [{"message": message}]}, {}
        number = self._next_number()
        self.pr_opened_at[number] = time.time()
        self.state.pulls[number] = {
            "number": number,
            "id": self._next_id(),
            "title": b.get("title", ""),
            "body": b.get("body", ""),
            "head_ref": head,
            "base_ref": base,
            "state": "open",
            "merged": False,
            "merge_commit_sha": None,
        }
        return 201, self._pull_view(self.state.pulls[number]), {}

    def _pull_view(self, pr: dict[str, Any]) -> dict[str, Any]:
        head_sha = self.branch_sha(pr["head_ref"]) or pr.get("last_head")
        if pr["merged"]:
            head_sha = pr.get("last_head")  # GitHub keeps the head it was merged at
        base_sha = self.branch_sha(pr["base_ref"])
        blocked = self.block_heads.get(pr["head_ref"], self.block_merge)
        if blocked is None and pr["state"] == "open" and head_sha and base_sha:
            blocked = self._conflicts(base_sha, head_sha)
        mergeable_state = {
            "review": "blocked",
            "protected": "blocked",
            "conflict": "dirty",
            "behind": "behind",
            "draft": "draft",
            "computing": "unknown",
        }.get(blocked or "", "clean")
        return {
            "number": pr["number"],
            "id": pr["id"],
            "title": pr["title"],
            "body": pr["body"],
            "state": pr["state"],
            "merged": pr["merged"],
            "merge_commit_sha": pr["merge_commit_sha"],
            "mergeable": None
            if pr["merged"] or blocked == "computing"
            else blocked not in ("conflict", "draft"),
            "mergeable_state": "unknown" if pr["merged"] else mergeable_state,
            "head": {"ref": pr["head_ref"], "sha": head_sha},
            "base": {"ref": pr["base_ref"], "sha": base_sha},
            "html_url": f"{self.url}/{self.full_name}/pull/{pr['number']}",
        }

    def _conflicts(self, base_sha: str, head_sha: str) -> str | None:
        """ "conflict" when the head does not merge into the base, as GitHub works out."""
        with Repo(str(self.repo_path)) as repo:
            done = merge(repo, base_sha, head_sha, "probe\n", 0)
        return "conflict" if isinstance(done, Conflict) else None

    def _pull_get(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        pr = self.state.pulls.get(int(m.group(1)))
        return (200, self._pull_view(pr), {}) if pr else (404, {"message": "Not Found"}, {})

    def _pull_patch(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        pr = self.state.pulls.get(int(m.group(1)))
        if pr is None:
            return 404, {"message": "Not Found"}, {}
        for key in ("title", "body", "state"):
            if key in b:
                pr[key] = b[key]
        return 200, self._pull_view(pr), {}

    def _pull_merge(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        pr = self.state.pulls.get(int(m.group(1)))
        if pr is None:
            return 404, {"message": "Not Found"}, {}
        if pr["merged"] or pr["state"] != "open":
            return 405, {"message": "Pull Request is not mergeable"}, {}
        head_sha = self.branch_sha(pr["head_ref"])
        block = self.block_heads.get(pr["head_ref"], self.block_merge)
        if (b.get("sha") and b["sha"] != head_sha) or block == "stale":
            return 409, {"message": "Head branch was modified. Review and try the merge again."}, {}
        if block == "review":
            return (
                405,
                {
                    "message": "At least 1 approving review is required by reviewers "
                    "with write access."
                },
                {},
            )
        if block == "protected":
            return 405, {"message": 'Required status check "ci" is expected.'}, {}
        if block in ("conflict", "computing"):
            return 405, {"message": "Pull Request is not mergeable"}, {}
        if block == "draft":
            return 405, {"message": "Pull Request is still a draft"}, {}
        if block == "behind":
            return 405, {"message": "Head branch is not up to date with the base branch"}, {}
        if b.get("merge_method", "merge") not in ("merge", "squash", "rebase"):
            return 422, {"message": "Validation Failed"}, {}
        return self._merged(pr, b.get("commit_title"), str(b.get("merge_method", "merge")))

    def _merged(
        self, pr: dict[str, Any], title: str | None, method: str
    ) -> tuple[int, Any, dict[str, str]]:
        head_sha = self.branch_sha(pr["head_ref"])
        assert head_sha is not None
        with Repo(str(self.repo_path)) as repo:
            base_ref = f"refs/heads/{pr['base_ref']}".encode()
            base_sha = repo.refs[base_ref].decode()
            title = title or f"Merge pull request #{pr['number']}"
            done = merge(repo, base_sha, head_sha, title + "\n", int(time.time()))
            if isinstance(done, Conflict):
                return 405, {"message": "Pull Request is not mergeable"}, {}
            # a push through the git endpoint may land meanwhile (it takes no API lock):
            # GitHub's merge never undoes it, and answers so
            if not repo.refs.set_if_equals(base_ref, base_sha.encode(), done.sha.encode()):
                return 405, {"message": BASE_MODIFIED}, {}
        # GitHub keeps a merged pull request's head sha after its branch goes
        pr.update(merged=True, state="closed", merge_commit_sha=done.sha, last_head=head_sha)
        self.merge_methods.append(method)
        return (
            200,
            {"sha": done.sha, "merged": True, "message": "Pull Request successfully merged"},
            {},
        )

    def _branch_get(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        sha = self.branch_sha(m.group(1))
        if sha is None:
            return 404, {"message": "Branch not found"}, {}
        return 200, {"name": m.group(1), "commit": {"sha": sha}}, {}

    def _compare(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        """GitHub's compare of two commits (`BASE...HEAD`, branches or shas): whether
        HEAD is ahead of BASE, behind it, the same or diverged, and by how many commits."""
        with Repo(str(self.repo_path)) as repo:
            base, head = (self._sha(m.group(i)).encode() for i in (1, 2))
            if base not in repo.object_store or head not in repo.object_store:
                return 404, {"message": "Not Found"}, {}
            ahead = sum(1 for _ in repo.get_walker(include=[head], exclude=[base]))
            behind = sum(1 for _ in repo.get_walker(include=[base], exclude=[head]))
        status = "diverged"
        if not ahead or not behind:
            status = "identical" if not ahead and not behind else "ahead" if ahead else "behind"
        return 200, {"status": status, "ahead_by": ahead, "behind_by": behind}, {}

    def _check_runs(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        runs = list(reversed(self.state.check_runs.get(self._sha(m.group(1)), [])))
        return 200, {"total_count": len(runs), "check_runs": runs}, {}

    def _status(self, m: Any, q: dict[str, str], b: Any) -> tuple[int, Any, dict[str, str]]:
        sha = self._sha(m.group(1))
        latest: dict[str, dict[str, Any]] = {}
        for status in self.state.statuses.get(sha, []):
            latest.setdefault(status["context"], status)
        states = [s["state"] for s in latest.values()]
        combined = (
            "failure"
            if any(s in ("failure", "error") for s in states)
            else "pending"
            if any(s == "pending" for s in states) or not states
            else "success"
        )
        return (
            200,
            {
                "state": combined,
                "sha": sha,
                "total_count": len(latest),
                "statuses": list(latest.values()),
            },
            {},
        )

    # ---- helpers ------------------------------------------------------------------

    def _sha(self, ref: str) -> str:
        return self.branch_sha(ref) or ref

    def _branch_of(self, sha: str) -> str | None:
        with Repo(str(self.repo_path)) as repo:
            for ref, value in repo.get_refs().items():
                if value.decode() == sha and ref.startswith(b"refs/heads/"):
                    return ref[len(b"refs/heads/") :].decode()
        return None

    def _label(self, name: str) -> dict[str, Any]:
        return {"id": abs(hash(name)) % 10**6, "name": name, "color": "ededed"}

    def _next_number(self) -> int:
        with self.lock:
            number = self.state.next_number
            self.state.next_number += 1
            return number

    def _next_id(self) -> int:
        with self.lock:
            self.state.next_id += 1
            return self.state.next_id
