"""What the settings allow for a place: the database's URL, the HTTP address, a
directory, the price table's file, read-only paths and the hosts a turn may reach. Run
once, when `Settings.from_env` reads the environment; a raise is the allowed form.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path

import psycopg

from hive.settings.values import (
    INTEGER_RE,
    NAME_MAX_BYTES,
    PATH_MAX_BYTES,
    SPACES,
    has_control,
)

_PORT_RE = re.compile(r"[0-9]{1,5}")
_HOSTNAME_RE = re.compile(
    r"(?=.{1,253}\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"
)
# Virtual file systems: a directory there is never the hive's to write.
_VIRTUAL_ROOTS = ("/proc", "/sys", "/dev")
_URL_SCHEMES = ("postgresql://", "postgres://")
_URL_FORMS = "postgresql://user:password@host:5432/db, or libpq words like host=db dbname=hive"
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def database_url(raw: str) -> str:
    """A postgresql:// URL or libpq key=value words. No message quotes the value (it
    holds the password), libpq's own error text included."""
    text = raw.strip(SPACES)
    if not text:
        raise ValueError(f"{_URL_FORMS}; unset it (not empty) to use the embedded server")
    if has_control(text):
        raise ValueError("a URL without control characters")
    if _SCHEME_RE.match(text) and not text.startswith(_URL_SCHEMES):
        raise ValueError("a URL whose scheme is postgresql:// or postgres://")
    if not text.startswith(_URL_SCHEMES) and "=" not in text:
        raise ValueError(_URL_FORMS)
    try:
        info = psycopg.conninfo.conninfo_to_dict(text)
    except psycopg.Error:
        raise ValueError(f"{_URL_FORMS} (%-encode a password's special characters)") from None
    for port in str(info.get("port") or "").split(","):
        if port and not (_PORT_RE.fullmatch(port) and 1 <= int(port) <= 65535):
            raise ValueError("a URL whose port is from 1 to 65535 (ASCII digits)")
    return text


def http_addr(raw: str) -> str:
    allowed = "host:port, the host a name or an IP address ([::1] for IPv6), the port 0 to 65535"
    host, sep, port = raw.strip(SPACES).rpartition(":")
    if not sep or not _PORT_RE.fullmatch(port) or int(port) > 65535:
        raise ValueError(allowed)
    if host.startswith("[") and host.endswith("]"):
        if not _is_ipv6(host[1:-1]):
            raise ValueError(allowed)
    elif not _HOSTNAME_RE.fullmatch(host):
        raise ValueError(allowed)
    return f"{host}:{int(port)}"


def _is_ipv6(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv6Address)
    except ValueError:
        return False


def optional_text(raw: str) -> str | None:
    """A path or URL in one line; empty means unset."""
    text = raw.strip(SPACES)
    if has_control(text):
        raise ValueError("a path or URL without control characters")
    return text or None


def directory(raw: str) -> Path:
    """A directory the hive may create: not a file, not under /proc, /sys or /dev, and
    not below a file. Whether it is writable is not asked here: a process that never
    uses it (`hive migrate` on a read-only root file system) must still start."""
    if not raw.strip(SPACES):
        raise ValueError("a directory path")
    if has_control(raw):
        raise ValueError("a directory path without control characters")
    try:
        encoded = os.fsencode(raw)
    except UnicodeError:
        raise ValueError("a directory path in the file system's encoding") from None
    if len(encoded) > PATH_MAX_BYTES or any(len(p) > NAME_MAX_BYTES for p in encoded.split(b"/")):
        raise ValueError(f"a directory path of at most {PATH_MAX_BYTES} bytes")
    path = Path(raw)
    for shown in {os.path.abspath(raw), os.path.realpath(raw)}:
        if any(shown == root or shown.startswith(root + "/") for root in _VIRTUAL_ROOTS):
            raise ValueError("a directory outside /proc, /sys and /dev")
    here = Path(os.path.abspath(raw))
    while not here.exists() and here != here.parent:
        here = here.parent
    if not here.is_dir():
        what = "it is a file" if here == Path(os.path.abspath(raw)) else f"{here} is a file"
        raise ValueError(f"a directory ({what})")
    return path


def prices_file(raw: str) -> Path | None:
    """A readable price table (hive/prices.py), read once here so a bad one is refused
    at start with the rest of the settings; empty: the one the package ships."""
    from hive.prices import PricesError, load

    if not raw.strip(SPACES):
        return None
    if has_control(raw):
        raise ValueError("the path of a price table file (TOML)")
    path = Path(raw.strip(SPACES))
    try:
        load(path)
    except PricesError as err:
        raise ValueError(f"a price table that reads ({err})") from None
    return path


def absolute_paths(raw: str) -> tuple[str, ...]:
    """Comma-separated absolute paths (HIVE_AGENT_SANDBOX_PATHS), each normalised once."""
    paths: list[str] = []
    for part in raw.split(","):
        path = part.strip(SPACES)
        if not path:
            continue
        if not path.startswith("/") or has_control(path) or len(path) > PATH_MAX_BYTES:
            raise ValueError("comma-separated absolute paths (/opt/toolchain,/var/cache/pip)")
        normal = os.path.normpath(path)
        if normal == "/":
            raise ValueError("paths below / (the whole machine is not a toolchain)")
        if normal not in paths:
            paths.append(normal)
    return tuple(paths)


def host_ports(raw: str) -> tuple[str, ...]:
    """Comma-separated host:port pairs (HIVE_AGENT_ALLOW_HOSTS), lower-cased, each once."""
    pairs: list[str] = []
    for part in raw.split(","):
        pair = part.strip(SPACES).lower()
        if not pair:
            continue
        host, _, port = pair.rpartition(":")
        host = host.strip("[]")
        if not host or not INTEGER_RE.fullmatch(port) or not 0 < int(port) < 65536:
            raise ValueError("comma-separated host:port pairs (api.anthropic.com:443)")
        if has_control(host) or " " in host:
            raise ValueError("comma-separated host:port pairs (api.anthropic.com:443)")
        if f"{host}:{int(port)}" not in pairs:
            pairs.append(f"{host}:{int(port)}")
    return tuple(pairs)
