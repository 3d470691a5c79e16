"""Signing a webhook's body the Standard Webhooks way, so a receiver verifies it with an off-the-shelf library.

Each POST carries ``webhook-id`` (the delivery's UUID, the same on every
retry: the receiver's idempotency key), ``webhook-timestamp`` (unix
seconds) and ``webhook-signature``: ``v1,`` and the base64 of HMAC-SHA256,
keyed with the secret's bytes, of ``f"{id}.{timestamp}."`` and the body
(https://www.standardwebhooks.com/). The id and the time are inside what is
signed, so a request replayed under another id, or later than the
receiver's tolerance, fails verification. Signing is the ``standardwebhooks``
package's own, the library receivers verify with.

Secrets are ``whsec_`` and the base64 of 32 random bytes. Webhooks added
before kandev signed this way have a secret in another form
(``whsec_`` + base64url, whose bytes as text were the key): such a secret is
signed with, and shown to receivers as, :func:`standard_secret` of it,
``whsec_`` + the base64 of its text, so the key is the same bytes as before.
"""

import base64
import binascii
import re
import secrets
from datetime import UTC, datetime

from standardwebhooks import Webhook

PREFIX = "whsec_"
#: The headers a receiver reads (lower case, as the specification writes them).
ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def new_secret() -> str:
    """A fresh secret for a new webhook: 256 random bits, in the Standard Webhooks form."""
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def standard_secret(secret: str) -> str:
    """``secret`` in the Standard Webhooks form: itself if it is, else a legacy secret's text as the key bytes."""
    encoded = secret.removeprefix(PREFIX)
    if secret.startswith(PREFIX) and len(encoded) % 4 == 0 and _BASE64.fullmatch(encoded):
        try:
            if base64.b64decode(encoded, validate=True):
                return secret
        except binascii.Error:
            pass
    return PREFIX + base64.b64encode(secret.encode()).decode()


def headers(secret: str, message_id: str, body: bytes, timestamp: int) -> dict[str, str]:
    """The three signature headers for ``body``, sent as message ``message_id`` at ``timestamp``."""
    signature = Webhook(standard_secret(secret)).sign(message_id, datetime.fromtimestamp(timestamp, UTC), body)
    return {ID_HEADER: message_id, TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: signature}
