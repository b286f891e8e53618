"""One POST to a receiver, bounded in time (pure: the standard library's http.client).

It connects to an address the URL guard checked (urlguard.Target), never to what a second DNS lookup says,
while the Host header and TLS (server name and certificate) use the URL's host. `timeout` bounds the whole
attempt, not each read: a watchdog shuts the socket when it runs out, so a receiver that accepts and then
drips or hangs costs the worker at most that long. Redirects are not followed (a 3xx is a failure).
"""

from __future__ import annotations

import http.client
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from reviewer.webhooks.urlguard import Target

EXCERPT_BYTES = 1000  # of the response body, kept on the attempt
# What PostgreSQL's text refuses: a NUL, and a lone surrogate (UTF-8 cannot encode it; psycopg raises on it).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` as the database can hold it, each character it refuses shown as U+FFFD: what a receiver sent is
    recorded, never refused, and never makes the recording of its attempt fail."""
    return _UNSTORABLE.sub("\ufffd", text)


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str  # "" when the receiver answered
    timed_out: bool
    duration_ms: int
    excerpt: str

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class _Pinned(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedTls(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post(*, target: Target, path: str, body: bytes, headers: dict[str, str], timeout: float) -> Outcome:
    """POST `body` to the target's first checked address; never raises for what the network or receiver does."""
    started = time.monotonic()
    kind = _PinnedTls if target.scheme == "https" else _Pinned
    conn = kind(target.host, target.port, target.addresses[0], timeout)
    fired = threading.Event()

    def cut() -> None:
        fired.set()
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked read at once
            except OSError:
                pass

    watchdog = threading.Timer(timeout, cut)
    watchdog.daemon = True
    watchdog.start()
    status, error, excerpt = None, "", ""
    try:
        conn.request("POST", path or "/", body=body, headers={"user-agent": "Proofdesk-Webhooks/1", **headers})
        response = conn.getresponse()
        status = response.status
        excerpt = response.read(EXCERPT_BYTES).decode("utf-8", "replace")
    except TimeoutError:  # socket.timeout is its alias
        error = f"timeout: no answer within {timeout:g} s"
        fired.set()
    except (OSError, http.client.HTTPException, ValueError) as exc:
        error = f"timeout: no answer within {timeout:g} s" if fired.is_set() else f"{type(exc).__name__}: {exc}"
    finally:
        watchdog.cancel()
        conn.close()
    timed_out = fired.is_set() and status is None
    return Outcome(status_code=status, error=storable(error[:500]), timed_out=timed_out,
                   duration_ms=round((time.monotonic() - started) * 1000), excerpt=storable(excerpt))
