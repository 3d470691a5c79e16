"""The deployment's VAPID key pair (RFC 8292): push services know kandev's pushes by it.

Browsers subscribe with the public key, so it must not change under them:
``KANDEV_VAPID_PRIVATE_KEY`` names it (a PEM, or base64url as ``vapid
--gen`` prints), else it is generated once into ``KANDEV_VAR_DIR`` and kept
there. Every web process of a deployment must use the same key: one var
directory, or the setting, which prod requires (``checks.py``, kandev.E004).
"""

from __future__ import annotations

import base64
import functools
import os
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from django.conf import settings
from py_vapid import Vapid

KEY_FILE = "vapid-private.pem"


@functools.cache
def key() -> Vapid:
    configured = settings.KANDEV_VAPID_PRIVATE_KEY.strip()
    if configured:
        if "BEGIN" in configured:
            return Vapid.from_pem(configured.encode())
        return Vapid.from_string(private_key=configured)
    return _kept(Path(settings.VAR_DIR) / KEY_FILE)


def _kept(path: Path) -> Vapid:
    """The key in ``path``, made there first if there is none; the first of racing processes wins."""
    if not path.exists():
        fresh = Vapid()
        fresh.generate_keys()
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, staged = tempfile.mkstemp(dir=path.parent, prefix=".vapid-")
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(fresh.private_pem())
            os.link(staged, path)  # atomic, and refused if another process got there first
        except FileExistsError:
            pass
        finally:
            os.unlink(staged)
    return Vapid.from_pem(path.read_bytes())


def public_key() -> str:
    """The ``applicationServerKey`` browsers subscribe with: the uncompressed point, base64url."""
    raw = key().public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def claims() -> dict[str, str]:
    """A fresh claims dict for each push: pywebpush fills in ``aud`` and ``exp`` in place."""
    return {"sub": settings.KANDEV_VAPID_SUBJECT}
