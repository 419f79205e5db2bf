"""The REST calls the forge makes on one repository, each one small function with the
shapes of GitHub's documented responses (issues, comments, pulls, merge, check runs, the
combined status)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hive.forge.github.client import GitHubClient, GitHubError, Response
from hive.rules.forge_checks import CheckFact, check_run_state, status_state

SUMMARY_MAX_CHARS = 2000


@dataclass(frozen=True)
class PullRequest:
    number: int
    state: str
    merged: bool
    head_ref: str
    head_sha: str
    base_ref: str
    mergeable: bool | None
    mergeable_state: str | None
    merge_commit_sha: str | None
    html_url: str

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> PullRequest:
        return cls(
            number=int(data["number"]),
            state=str(data.get("state", "")),
            merged=bool(data.get("merged")),
            head_ref=str(data["head"]["ref"]),
            head_sha=str(data["head"].get("sha") or ""),
            base_ref=str(data["base"]["ref"]),
            mergeable=data.get("mergeable"),
            mergeable_state=data.get("mergeable_state"),
            merge_commit_sha=data.get("merge_commit_sha"),
            html_url=str(data.get("html_url", "")),
        )


@dataclass(frozen=True)
class MergeRefused:
    """GitHub refused the merge (405 not mergeable, 409 head modified)."""

    status: int
    message: str


class Repository:
    """`owner/name` on GitHub through `client`."""

    def __init__(self, client: GitHubClient, full_name: str) -> None:
        self.client = client
        self.full_name = full_name
        self.owner = full_name.split("/")[0]
        self.base = f"/repos/{full_name}"

    def info(self) -> Mapping[str, Any]:
        """The repository (its `clone_url`, `default_branch`)."""
        return dict(self.client.request("GET", self.base).data)

    # ---- issues -------------------------------------------------------------------

    def labelled_issues(self, label: str, etag: str | None) -> Response:
        """Every issue (open and closed) carrying `label`, newest change first, pages
        followed; a 304 with no data when nothing changed since `etag`."""
        params = {"labels": label, "state": "all", "sort": "updated", "direction": "desc"}
        return self.client.get_all(f"{self.base}/issues", params, etag=etag)

    def issue(self, number: int) -> Mapping[str, Any]:
        return dict(self.client.request("GET", f"{self.base}/issues/{number}").data)

    def open_issue(self, title: str, body: str, labels: list[str]) -> int:
        data = {"title": title, "body": body, "labels": labels}
        return int(self.client.request("POST", f"{self.base}/issues", data).data["number"])

    def edit_issue_body(self, number: int, body: str) -> None:
        self.client.request("PATCH", f"{self.base}/issues/{number}", {"body": body})

    def close_issue(self, number: int) -> None:
        data = {"state": "closed", "state_reason": "completed"}
        self.client.request("PATCH", f"{self.base}/issues/{number}", data)

    def comment(self, number: int, body: str) -> int:
        path = f"{self.base}/issues/{number}/comments"
        return int(self.client.request("POST", path, {"body": body}).data["id"])

    def comments(self, number: int) -> list[tuple[int, str]]:
        """Every comment on issue `number`: (its id, its body), oldest first."""
        found = self.client.get_all(f"{self.base}/issues/{number}/comments").data or []
        return [(int(c["id"]), str(c.get("body") or "")) for c in found]

    def edit_comment(self, comment_id: int, body: str) -> None:
        path = f"{self.base}/issues/comments/{comment_id}"
        self.client.request("PATCH", path, {"body": body})

    # ---- pull requests ------------------------------------------------------------

    def open_pull(self, branch: str) -> PullRequest | None:
        """The open pull request from `branch` of this repository, if any."""
        found = self.client.get_all(
            f"{self.base}/pulls", {"head": f"{self.owner}:{branch}", "state": "open"}
        ).data
        return PullRequest.of(found[0]) if found else None

    def merged_pull(self, branch: str, head_sha: str) -> PullRequest | None:
        """A pull request from `branch` merged at `head_sha` or at a head that has it in
        its history (a person added commits before merging), if any (newest first)."""
        found = self.client.get_all(
            f"{self.base}/pulls", {"head": f"{self.owner}:{branch}", "state": "closed"}
        ).data
        for data in found or ():
            pr = PullRequest.of(data)
            if pr.merged and (pr.head_sha == head_sha or self.has(pr.head_sha, head_sha)):
                return pr
        return None

    def has(self, head: str, sha: str) -> bool:
        """Whether commit `head` has commit `sha` in its history (GitHub's compare of
        `sha...head`: the same, or ahead of it)."""
        found = self.client.request("GET", f"{self.base}/compare/{sha}...{head}").data
        return str(found.get("status")) in ("identical", "ahead")

    def create_pull(self, title: str, head: str, base: str, body: str) -> PullRequest:
        data = {"title": title, "head": head, "base": base, "body": body}
        return PullRequest.of(self.client.request("POST", f"{self.base}/pulls", data).data)

    def update_pull(self, number: int, title: str, body: str) -> PullRequest:
        data = {"title": title, "body": body}
        path = f"{self.base}/pulls/{number}"
        return PullRequest.of(self.client.request("PATCH", path, data).data)

    def branch_sha(self, branch: str) -> str | None:
        """The tip of `branch` on GitHub, or None when there is no such branch."""
        try:
            found = self.client.request("GET", f"{self.base}/branches/{branch}").data
        except GitHubError as err:
            if err.status == 404:
                return None
            raise
        return str(found["commit"]["sha"])

    def pull(self, number: int) -> PullRequest:
        return PullRequest.of(self.client.request("GET", f"{self.base}/pulls/{number}").data)

    def merge(self, number: int, sha: str, method: str, title: str) -> str | MergeRefused:
        """Merge pull request `number` only while its head is `sha` (GitHub's
        compare-and-swap); the merge commit's sha, or MergeRefused."""
        data = {"sha": sha, "merge_method": method, "commit_title": title}
        try:
            answer = self.client.request("PUT", f"{self.base}/pulls/{number}/merge", data)
        except GitHubError as err:
            if err.status in (405, 409):
                return MergeRefused(err.status, err.message)
            raise
        return str(answer.data["sha"])

    # ---- checks -------------------------------------------------------------------

    def checks(self, sha: str) -> list[CheckFact]:
        """Every check of commit `sha`: its check runs (the newest of each name) and its
        commit statuses (the newest of each context)."""
        runs = self.client.request(
            "GET", f"{self.base}/commits/{sha}/check-runs", params={"per_page": 100}
        ).data
        newest: dict[str, Mapping[str, Any]] = {}
        for run in runs.get("check_runs", []):
            name = str(run.get("name", ""))
            if name not in newest or int(run.get("id", 0)) > int(newest[name].get("id", 0)):
                newest[name] = run
        facts = [
            CheckFact(
                name,
                check_run_state(run.get("status"), run.get("conclusion")),
                _summary(run.get("output") or {}),
            )
            for name, run in sorted(newest.items())
        ]
        combined = self.client.request("GET", f"{self.base}/commits/{sha}/status").data
        for status in combined.get("statuses", []):
            context = str(status.get("context", ""))
            if context in newest:
                continue
            facts.append(
                CheckFact(
                    context,
                    status_state(status.get("state")),
                    str(status.get("description") or "")[:SUMMARY_MAX_CHARS],
                )
            )
        return facts


def _summary(output: Mapping[str, Any]) -> str:
    parts = [str(output.get(k) or "").strip() for k in ("title", "summary")]
    return "\n".join(p for p in parts if p)[:SUMMARY_MAX_CHARS]
