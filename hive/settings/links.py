"""Kubernetes service links: variables the platform writes, passed over by the reader.

A pod started with service links on (the default) receives, for every Service in its
namespace, variables named after the Service: a Service `hive-queen` gives
HIVE_QUEEN_SERVICE_HOST, HIVE_QUEEN_PORT_8080_TCP and their kin. They are the
platform's, not configuration: a name with exactly one of these shapes, a value of the
matching form and its Service's HIVE_..._SERVICE_HOST beside it is passed over; anything
else under HIVE_ is still refused.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

_LINK_PROTOCOLS = ("tcp", "udp", "sctp")
_LINK_TAIL_RE = re.compile(
    r"^(?:SERVICE_PORT(?:_[A-Z0-9_]+)?"
    r"|PORT(?:_(?P<port>[0-9]+)_(?P<proto>TCP|UDP|SCTP)(?:_(?P<part>PROTO|PORT|ADDR))?)?)$"
)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


_PORT_RE = re.compile(r"[1-9][0-9]{0,4}")  # ASCII digits: str.isdigit() would take "٣"


def _is_port(text: str) -> bool:
    return _PORT_RE.fullmatch(text) is not None and int(text) <= 65535


def _is_link_url(text: str, protocol: str | None, port: str | None) -> bool:
    """`tcp://10.0.0.7:8080` (or `tcp://[fd00::7]:8080`), as Kubernetes writes a port's
    address, with the given protocol and port when they are known from the name."""
    scheme, sep, hostport = text.partition("://")
    host, colon, number = hostport.rpartition(":")
    if not sep or not colon or scheme not in _LINK_PROTOCOLS or not _is_port(number):
        return False
    if (protocol is not None and scheme != protocol) or (port is not None and number != port):
        return False
    return _is_ip(host[1:-1] if host.startswith("[") and host.endswith("]") else host)


def _link_value_fits(match: re.Match[str], value: str) -> bool:
    port, proto, part = match.group("port"), match.group("proto"), match.group("part")
    if port is None:
        if match.group(0).startswith("SERVICE_PORT"):
            return _is_port(value)
        return _is_link_url(value, None, None)
    protocol = proto.lower()
    if part is None:
        return _is_link_url(value, protocol, port)
    if part == "PROTO":
        return value == protocol
    if part == "PORT":
        return value == port
    return _is_ip(value)


def is_service_link(name: str, env: Mapping[str, str]) -> bool:
    """True when `name` is a variable Kubernetes injects for a Service in the pod's
    namespace: `<SERVICE>_SERVICE_HOST`, `_SERVICE_PORT`, `_SERVICE_PORT_<NAME>`, `_PORT`,
    `_PORT_<n>_<PROTO>` and `_PORT_<n>_<PROTO>_PROTO|_PORT|_ADDR`, with the value
    Kubernetes gives each, and `<SERVICE>_SERVICE_HOST` holding an IP address."""
    if name.endswith("_SERVICE_HOST"):
        return _is_ip(env.get(name, ""))
    for at in (m.start() for m in re.finditer("_", name)):
        service, tail = name[:at], name[at + 1 :]
        if not _is_ip(env.get(f"{service}_SERVICE_HOST", "")):
            continue
        match = _LINK_TAIL_RE.fullmatch(tail)
        if match and _link_value_fits(match, env.get(name, "")):
            return True
    return False
