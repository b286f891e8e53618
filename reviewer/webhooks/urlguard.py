"""Which URLs a webhook may be sent to (pure: the standard library's resolver, no Django).

Only http and https, and only hosts whose every address is public: a webhook is a request our server makes on
an admin's behalf, so a URL pointing at loopback, the private network, link-local (cloud metadata at
169.254.169.254) or reserved space would let it reach what only the server can reach. `allow_private` lifts
the address check (settings.WEBHOOK_ALLOW_PRIVATE_URLS: a receiver on the same network; the tests). The check
runs when an endpoint is saved and again before each attempt, and the attempt connects to the address it
checked, so a DNS answer that changes in between (rebinding) cannot redirect it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2000


class UnsafeUrl(ValueError):
    """The URL may not receive webhooks; the message says why, in words."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]  # every address the host resolved to, each one checked


Resolver = Callable[[str, int], list[str]]


def resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


# IPv6 forms that carry an IPv4 address in their last 32 bits, reaching it through a translator or a tunnel:
# IPv4-compatible (::a.b.c.d, RFC 4291), NAT64's well-known and local-use prefixes (RFC 6052, RFC 8215).
_CARRY_IPV4_LOW = (ipaddress.IPv6Network("::/96"), ipaddress.IPv6Network("64:ff9b::/96"),
                   ipaddress.IPv6Network("64:ff9b:1::/48"))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address reaches: mapped (::ffff:a.b.c.d), IPv4-compatible, NAT64, 6to4
    (2002:AABB:CCDD::, RFC 3056) and Teredo's server and client (2001::/32, RFC 4380)."""
    out = [ip.ipv4_mapped] if ip.ipv4_mapped is not None else []
    if any(ip in net for net in _CARRY_IPV4_LOW) and int(ip) & 0xFFFFFFFF:
        out.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        out.append(ip.sixtofour)
    if ip.teredo is not None:
        out.extend(ip.teredo)
    return out


def _public_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not ip.is_multicast


def is_public(address: str) -> bool:
    """Whether the address, and every IPv4 address it embeds, is public. An IPv6 form that carries a private
    IPv4 address ([::127.0.0.1], [64:ff9b::7f00:1], [2002:7f00:1::]) reaches that address through a
    translator or tunnel (or the host's own stack), so it is as private as what it carries."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone id is not part of the address
    if isinstance(ip, ipaddress.IPv4Address):
        return _public_ip(ip)
    embedded = _embedded_ipv4(ip)
    if ip.ipv4_mapped is not None:
        return _public_ip(ip.ipv4_mapped)  # ::ffff:0:0/96 is never global itself: its IPv4 address decides
    return _public_ip(ip) and all(_public_ip(v4) for v4 in embedded)


def parse(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, or UnsafeUrl."""
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UnsafeUrl(f"This is not a URL ({exc}).") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeUrl("Only http:// and https:// URLs can receive webhooks.")
    if not parts.hostname:
        raise UnsafeUrl("The URL names no host.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl("Leave the user and password out of the URL: the signature authenticates each delivery.")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def check(url: str, *, allow_private: bool = False, resolver: Resolver = resolve) -> Target:
    """The URL's target with the addresses it may be sent to, or UnsafeUrl saying why not."""
    scheme, host, port = parse(url)
    try:
        addresses = resolver(host, port)
    except (OSError, UnicodeError) as exc:
        raise UnsafeUrl(f"The host {host} could not be resolved ({exc}).") from None
    if not addresses:
        raise UnsafeUrl(f"The host {host} has no address.")
    if not allow_private:
        refused = [a for a in addresses if not is_public(a)]
        if refused:
            raise UnsafeUrl(f"{host} resolves to {refused[0]}, a private, loopback, link-local or reserved address: "
                            "webhooks go to public addresses only.")
    return Target(scheme=scheme, host=host, port=port, addresses=tuple(addresses))
