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


# IPv6 forms that only stand for an IPv4 address, reached through a translator, a tunnel or the host's own
# stack: the IPv4 address alone decides whether they are public. IPv4-compatible (::a.b.c.d, RFC 4291), mapped
# (::ffff:a.b.c.d), SIIT's translated (::ffff:0:a.b.c.d, RFC 2765) and NAT64's well-known prefix (64:ff9b::/96,
# RFC 6052) carry it in their last 32 bits; 6to4 (2002:AABB:CCDD::/48, RFC 3056) in bits 16-48. The prefixes'
# own is_global is not asked: Python releases differ on it (later ones call 2002::/16 not global).
_IPV4_IN_LOW_BITS = (ipaddress.IPv6Network("::/96"), ipaddress.IPv6Network("::ffff:0:0/96"),
                     ipaddress.IPv6Network("::ffff:0:0:0/96"), ipaddress.IPv6Network("64:ff9b::/96"))
_SIXTOFOUR = ipaddress.IPv6Network("2002::/16")
# NAT64's local-use prefix (RFC 8215) reaches whatever the site's own translator reaches, with the IPv4 address
# wherever the site's prefix length puts it: refused whole, as IANA lists it (not globally reachable).
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")
# ISATAP (RFC 5214): an interface identifier 0000:5efe:a.b.c.d (0200:5efe: with the universal bit) tunnels
# to that IPv4 address from a host with an ISATAP interface.
_ISATAP_IDS = (0x00005EFE, 0x02005EFE)


def _stands_for(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address is only another name for, or None."""
    if any(ip in net for net in _IPV4_IN_LOW_BITS):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour if ip in _SIXTOFOUR else None


def _tunnel_ends(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses a global-looking IPv6 address also reaches: Teredo's server and client (2001::/32, RFC
    4380; ipaddress undoes the client's obfuscation; no Python release calls 2001::/32 global, so this only
    backs that up) and an ISATAP interface identifier's."""
    out = list(ip.teredo) if ip.teredo is not None else []
    if (int(ip) >> 32) & 0xFFFFFFFF in _ISATAP_IDS:
        out.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return out


def _public_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not ip.is_multicast


def is_public(address: str) -> bool:
    """Whether the address, and every IPv4 address it embeds, is public. An IPv6 form that carries a private
    IPv4 address ([::127.0.0.1], [64:ff9b::7f00:1], [2002:7f00:1::]) reaches that address through a
    translator or tunnel (or the host's own stack), so it is as private as what it carries; one that carries a
    public address ([64:ff9b::808:808], [2002:808:808::1]) reaches only that public address and is accepted."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone id is not part of the address
    if isinstance(ip, ipaddress.IPv4Address):
        return _public_ip(ip)
    if ip in _LOCAL_NAT64:
        return False
    carried = _stands_for(ip)
    if carried is not None:
        return _public_ip(carried)
    return _public_ip(ip) and all(_public_ip(v4) for v4 in _tunnel_ends(ip))


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
