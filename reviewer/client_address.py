"""The client's address: the peer's, or the one a configured trusted proxy says it saw.

Behind a reverse proxy every request comes from the proxy's address, so per-address limits would put all
users in one bucket. The proxy appends the address it saw to X-Forwarded-For (or CLIENT_ADDRESS_HEADER);
that header is believed only when the peer is one of TRUSTED_PROXIES, and only the entries those proxies
wrote: walking from the right, past trusted proxies, the first other address is the client. Whatever a
client writes into the header itself sits further left and is never read.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
    return address is not None and any(address in network for network in settings.TRUSTED_PROXIES)


def client_address(request: HttpRequest) -> str:
    peer = request.META.get("REMOTE_ADDR", "")
    if not _trusted(_ip(peer)):
        return peer
    meta_name = "HTTP_" + settings.CLIENT_ADDRESS_HEADER.upper().replace("-", "_")
    hops = [hop.strip() for hop in request.META.get(meta_name, "").split(",") if hop.strip()]
    for hop in reversed(hops):
        address = _ip(hop)
        if address is None:
            return peer  # not what a proxy writes: the header cannot be trusted
        if not _trusted(address):
            return str(address)
    return peer
