"""Signing a webhook's body so its receiver can tell it came from kandev, unaltered and recently.

The scheme is Stripe's: ``X-Kandev-Signature: t=<unix seconds>,v1=<hex>``
where ``<hex>`` is HMAC-SHA256, keyed with the webhook's secret, of
``f"{t}.".encode() + body``. The timestamp is inside what is signed, so an
old request replayed later fails a receiver's freshness check; the body is
signed as the exact bytes sent, so a receiver verifies before it parses.
No Django here: a receiver can copy this module.
"""

import hashlib
import hmac
import secrets

HEADER = "X-Kandev-Signature"
#: How old a signature a receiver should accept, by default (seconds).
TOLERANCE_SECONDS = 300


def new_secret() -> str:
    """A fresh secret for a new webhook: 256 bits, URL-safe."""
    return "whsec_" + secrets.token_urlsafe(32)


def _digest(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """The value of the signature header for ``body`` sent at ``timestamp``."""
    return f"t={timestamp},v1={_digest(secret, timestamp, body)}"


def verify(secret: str, body: bytes, header: str, *, now: int, tolerance: int = TOLERANCE_SECONDS) -> bool:
    """Whether ``header`` signs ``body`` with ``secret``, no more than ``tolerance`` seconds before ``now``."""
    fields: dict[str, list[str]] = {}
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if sep:
            fields.setdefault(key, []).append(value)
    try:
        timestamp = int(fields["t"][0])
    except (KeyError, ValueError):
        return False
    if abs(now - timestamp) > tolerance:
        return False
    expected = _digest(secret, timestamp, body)
    return any(hmac.compare_digest(expected, candidate) for candidate in fields.get("v1", []))
