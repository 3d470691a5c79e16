"""What a Web Push says, and what a browser may hand us as its subscription: pure functions, no I/O.

A push ends up on a lock screen, so it names the task and never the
question, and it is plain text: the service worker gives it to
``showNotification``, which shows text as it is. Task titles are an
operator's or an agent's words, so they are made one bounded line here
(control and direction-override characters gone) rather than trusted.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from kandev_web.storable import REPLACEMENT

#: How much of a task's title a push names; the rest is on the task page.
TASK_TITLE_CHARS = 120
#: A notification's title and body: a lock screen shows a line or two of each.
TITLE_CHARS = 100
BODY_CHARS = 240
#: Push services take 4 KiB of encrypted payload (RFC 8030); aes128gcm adds about 100 bytes.
#: A payload is at most ``(TITLE_CHARS + BODY_CHARS) * 4`` bytes of text plus a URL and a tag.
PAYLOAD_BYTES = 3_000
#: The longest endpoint kept (the column's width); push services' are a few hundred characters.
ENDPOINT_CHARS = 2_000

#: Characters that would make a line something else: controls (C0, C1, line and paragraph
#: separators), zero-width and bidirectional overrides that reorder what the reader sees.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SPACES = re.compile(r"\s+")


def plain(text: str, limit: int) -> str:
    """``text`` as one line of at most ``limit`` characters, cut with an ellipsis."""
    line = _SPACES.sub(" ", _INVISIBLE.sub(" ", _SURROGATE.sub(REPLACEMENT, text))).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def build(*, title: str, body: str, task_title: str, url: str, tag: str) -> dict[str, str]:
    """The push for one notification; ``body`` is a translated text with a ``%(title)s`` for the task's title.

    ``url`` is the page a click opens, a path on this site; ``tag`` lets a
    newer push about the same occurrence replace an older one.
    """
    return {
        "title": plain(title, TITLE_CHARS),
        "body": plain(body % {"title": plain(task_title, TASK_TITLE_CHARS)}, BODY_CHARS),
        "url": url,
        "tag": tag,
    }


def encode(payload: dict[str, str]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Subscription:
    endpoint: str
    p256dh: str
    auth: str


def _key(value: object, length: int, prefix: bytes = b"") -> str | None:
    """``value``, unpadded, if it is base64url of exactly ``length`` bytes starting with ``prefix``."""
    if not isinstance(value, str) or len(value) > 200:
        return None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return None
    return value.rstrip("=") if len(raw) == length and raw.startswith(prefix) else None


def parse_subscription(data: object, *, allow_http: bool) -> Subscription | None:
    """The subscription in ``PushSubscription.toJSON()``'s shape, or ``None`` if it is not one.

    Push services are HTTPS; ``allow_http`` admits plain HTTP for a
    development or test push service on this machine.
    """
    if not isinstance(data, dict):
        return None
    endpoint, keys = data.get("endpoint"), data.get("keys")
    if not isinstance(endpoint, str) or not isinstance(keys, dict) or len(endpoint) > ENDPOINT_CHARS:
        return None
    try:
        parts = urlsplit(endpoint)
    except ValueError:
        return None
    if parts.scheme not in ({"https", "http"} if allow_http else {"https"}) or not parts.hostname:
        return None
    if _INVISIBLE.search(endpoint) or " " in endpoint:
        return None
    # An uncompressed P-256 point (0x04, x, y) and a 16-byte secret (RFC 8291 §3).
    p256dh, auth = _key(keys.get("p256dh"), 65, b"\x04"), _key(keys.get("auth"), 16)
    if p256dh is None or auth is None:
        return None
    return Subscription(endpoint=endpoint, p256dh=p256dh, auth=auth)
