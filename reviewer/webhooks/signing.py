"""Standard Webhooks signatures (pure): https://www.standardwebhooks.com/, through the `standardwebhooks` package.

The signed content is "{id}.{timestamp}.{body}", HMAC-SHA256 with the endpoint's secret, sent as
`webhook-signature: v1,<base64>`. The id is the event's, the same on every attempt, so a receiver dedupes by it;
the timestamp is the attempt's, so a retry a day later still passes a verifier's five-minute tolerance.
"""

from __future__ import annotations

import base64
import secrets
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

SECRET_PREFIX = "whsec_"  # noqa: S105 (the prefix verifiers strip, not a secret)


def new_secret() -> str:
    """A fresh endpoint secret: 24 random bytes, base64, with the whsec_ prefix verifiers expect."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def signature(*, secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    return Webhook(secret).sign(msg_id=msg_id, timestamp=datetime.fromtimestamp(timestamp, tz=UTC),
                                data=body.decode())


def signed_headers(*, secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret=secret, msg_id=msg_id, timestamp=timestamp, body=body),
    }
