"""A small client of Matrix's Client-Server API: what a bot needs and nothing more.

`whoami`, `join` (an id or an alias), `displayname`, `send` (a PUT under a transaction
id: the same id sent again, after a crash or a lost answer, gives the same event and
posts nothing twice) and `sync` (the room's messages after a `since` token, waiting up
to `timeout_ms` for one). The token goes in the Authorization header only: no URL, log
line or error holds it. An error is MatrixError with the server's errcode, or status 0
when the server could not be reached.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from hive.errors import HiveError

API = "/_matrix/client/v3"
TIMEOUT_SECONDS = 30.0  # a request's bound beyond a sync's own wait
TIMELINE_LIMIT = 100  # messages one sync (or one page back) returns at most
BACK_PAGES_MAX = 50  # a sync that skipped more than 50 pages of messages says `limited`
DEPTH_KEY = "org.hive.depth"  # the chain depth a bot's message carries (hive.rules.chat)


class MatrixError(HiveError):
    """The homeserver answered with an error (`status`, `errcode`), or could not be
    reached (status 0). `retry_after_ms` when it asked for a pause."""

    def __init__(
        self, status: int, errcode: str, message: str, what: str, retry_after_ms: int = 0
    ) -> None:
        self.status = status
        self.errcode = errcode
        self.retry_after_ms = retry_after_ms
        super().__init__(f"Matrix {what}: {status or 'unreachable'} {errcode} {message}".strip())


@dataclass(frozen=True)
class RoomMessage:
    """A message of the room: who sent it, its text, the ids it mentions, the thread it
    is in (its root's id), the chain depth a hive bot wrote on it, and when (ms)."""

    event_id: str
    sender: str
    body: str
    mentions: tuple[str, ...] = ()
    thread_root: str | None = None
    depth: int | None = None
    ts_ms: int = 0

    @classmethod
    def of(cls, event: dict[str, Any]) -> RoomMessage | None:
        content = event.get("content")
        if event.get("type") != "m.room.message" or not isinstance(content, dict):
            return None
        body = content.get("body")
        if not isinstance(body, str) or not isinstance(event.get("event_id"), str):
            return None
        mentioned = content.get("m.mentions")
        ids = mentioned.get("user_ids") if isinstance(mentioned, dict) else None
        relates = content.get("m.relates_to")
        root = None
        if isinstance(relates, dict) and relates.get("rel_type") == "m.thread":
            root = relates.get("event_id") if isinstance(relates.get("event_id"), str) else None
        depth = content.get(DEPTH_KEY)
        return cls(
            event_id=event["event_id"],
            sender=str(event.get("sender", "")),
            body=body,
            mentions=tuple(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else (),
            thread_root=root,
            depth=depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
            ts_ms=int(event.get("origin_server_ts") or 0),
        )


@dataclass(frozen=True)
class SyncPage:
    next_batch: str
    messages: tuple[RoomMessage, ...]
    limited: bool = False  # the server skipped messages (more than TIMELINE_LIMIT)


class MatrixClient:
    """Requests to the homeserver at `base_url` as the user of `token`."""

    def __init__(self, base_url: str, token: str, timeout_seconds: float = TIMEOUT_SECONDS):
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._timeout = timeout_seconds

    def __repr__(self) -> str:
        return f"MatrixClient({self.base_url!r})"  # never the token

    def whoami(self) -> str:
        return str(self._call("GET", "/account/whoami", what="whoami")["user_id"])

    def join(self, room: str) -> str:
        """Join `room` (an id `!x:hs` or an alias `#x:hs`); its id."""
        got = self._call("POST", f"/join/{quote(room, safe='')}", {}, what="join")
        return str(got["room_id"])

    def displayname(self, user_id: str) -> str:
        try:
            got = self._call(
                "GET", f"/profile/{quote(user_id, safe='')}/displayname", what="profile"
            )
        except MatrixError as err:
            if err.status == 404:
                return ""
            raise
        name = got.get("displayname")
        return name if isinstance(name, str) else ""

    def send(self, room_id: str, txn_id: str, content: dict[str, Any]) -> str:
        """Post `content` as an m.room.message under `txn_id`; the event's id."""
        path = f"/rooms/{quote(room_id, safe='')}/send/m.room.message/{quote(txn_id, safe='')}"
        return str(self._call("PUT", path, content, what="send")["event_id"])

    def sync(self, room_id: str, since: str | None, timeout_ms: int) -> SyncPage:
        """The room's messages after `since` (None: none, only a token to start from)."""
        timeline: dict[str, Any] = {"types": ["m.room.message"], "limit": TIMELINE_LIMIT}
        if since is None:
            timeline["limit"] = 0
        room_filter = {
            "rooms": [room_id],
            "timeline": timeline,
            "state": {"types": []},
            "ephemeral": {"types": []},
            "account_data": {"types": []},
        }
        params: dict[str, Any] = {
            "filter": json.dumps(
                {"room": room_filter, "presence": {"types": []}, "account_data": {"types": []}}
            ),
            "timeout": timeout_ms if since is not None else 0,
        }
        if since is not None:
            params["since"] = since
        got = self._call(
            "GET",
            "/sync?" + urlencode(params),
            what="sync",
            timeout=self._timeout + timeout_ms / 1000,
        )
        joined = got.get("rooms", {}).get("join", {}).get(room_id, {})
        timeline = joined.get("timeline", {})
        events = timeline.get("events", []) if since is not None else []
        limited = bool(timeline.get("limited")) and since is not None
        if limited and isinstance(timeline.get("prev_batch"), str):
            # more came than one page: the rest, back to `since`, from the room's history
            events = self._back(room_id, timeline["prev_batch"], str(since)) + events
            limited = False
        found = tuple(m for m in map(RoomMessage.of, events) if m is not None)
        return SyncPage(str(got["next_batch"]), found, limited)

    def _back(self, room_id: str, start: str, since: str) -> list[dict[str, Any]]:
        """The room's messages from `start` back to `since`, oldest first (at most
        BACK_PAGES_MAX pages: past that the page says it is `limited`)."""
        found: list[dict[str, Any]] = []
        token = start
        for _ in range(BACK_PAGES_MAX):
            params = {
                "dir": "b",
                "from": token,
                "to": since,
                "limit": TIMELINE_LIMIT,
                "filter": json.dumps({"types": ["m.room.message"]}),
            }
            path = f"/rooms/{quote(room_id, safe='')}/messages?" + urlencode(params)
            got = self._call("GET", path, what="messages")
            chunk = got.get("chunk") or []
            found += chunk
            end = got.get("end")
            if not chunk or not isinstance(end, str) or end == token:
                break
            token = end
        found.reverse()
        return found

    def event(self, room_id: str, event_id: str) -> RoomMessage | None:
        """One message of the room by its id (None: not a message, or not found)."""
        path = f"/rooms/{quote(room_id, safe='')}/event/{quote(event_id, safe='')}"
        try:
            return RoomMessage.of(self._call("GET", path, what="event"))
        except MatrixError as err:
            if err.status == 404:
                return None
            raise

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        what: str,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + API + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self._token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout or self._timeout) as answer:
                got = json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as err:
            raise _error(err, what) from None
        except (OSError, ValueError) as err:
            raise MatrixError(0, "", type(err).__name__, what) from None
        if not isinstance(got, dict):
            raise MatrixError(200, "", "an answer that is no JSON object", what)
        return got


def _error(err: urllib.error.HTTPError, what: str) -> MatrixError:
    try:
        data = json.loads(err.read() or b"{}")
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    retry = data.get("retry_after_ms")
    return MatrixError(
        err.code,
        str(data.get("errcode", "")),
        str(data.get("error", ""))[:200],
        what,
        retry if isinstance(retry, int) else 0,
    )
