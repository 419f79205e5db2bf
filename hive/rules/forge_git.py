"""Which git traffic carries the forge's token (DESIGN 10): the forge's git origin,
and whether a URL is it. Pure."""

from __future__ import annotations

from urllib.parse import urlsplit

GIT_USER = "x-access-token"  # GitHub takes a token for git as HTTP Basic with this user
_DEFAULT_PORTS = {"https": 443, "http": 80}
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def forge_git_origin(api_url: str) -> tuple[str, str, int]:
    """(scheme, host, port) where the forge of `api_url` serves git: github.com for
    api.github.com, the API's own host and port otherwise (GitHub Enterprise serves
    its API at `https://host/api/v3` and git at `https://host/`)."""
    parts = urlsplit(api_url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host == "api.github.com":
        host = "github.com"
    return scheme, host, parts.port or _DEFAULT_PORTS.get(scheme, 0)


def git_sends_token(url: str, api_url: str) -> bool:
    """Whether git traffic to `url` carries the forge's token: only over https to the
    forge's git origin (`forge_git_origin`), or over http where the forge itself is a
    loopback http address (a test's fake). A URL carrying a user or password of its own
    gets nothing added; a path, another host, port or scheme gets nothing."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    if parts.username is not None or parts.password is not None:
        return False
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return False
    origin = forge_git_origin(api_url)
    if scheme == "http" and not (origin[0] == "http" and origin[1] in _LOOPBACK):
        return False
    host = (parts.hostname or "").lower()
    return (scheme, host, port or _DEFAULT_PORTS[scheme]) == origin
