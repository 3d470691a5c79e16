"""Secrets at rest: values sealed with the deployment's keys, opened only to hand them to an agent.

An agent profile's API keys are stored as Fernet tokens (``cryptography``:
AES-128-CBC with an HMAC-SHA256, a timestamp, nothing hand-made here), one per
variable, so their names can be listed and one replaced without opening the
others. ``KANDEV_SECRETS_KEY`` holds one key or several separated by commas:
the first seals, any of them opens (``MultiFernet``), so a key is rotated by
putting a new one first, running ``manage.py rotate_secrets``, then dropping
the old one (docs/operating.md#secrets; docs/decisions/operator.md#secrets-at-rest).

No Django: the settings parse the keys with it before Django is set up.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

#: What an environment variable's name may be: a POSIX shell name.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A name whose value an operator would not want in clear, case aside: one
#: ending in ``KEY``, ``APIKEY`` or ``TOKEN`` (the whole name or after an
#: ``_``: ``ANTHROPIC_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ``HF_TOKEN``, not
#: ``MONKEY`` or ``MAX_TOKENS``), or holding ``SECRET``, ``PASSWORD`` or ``PASSWD``.
_CREDENTIAL = re.compile(r"(?:^|_)(?:(?:API)?KEY|TOKEN)$|SECRET|PASSWORD|PASSWD", re.IGNORECASE)


class SecretsKeyError(ValueError):
    """``KANDEV_SECRETS_KEY`` is not a list of Fernet keys; the message says how to make one."""


class SecretUnreadable(Exception):
    """A stored secret does not open with the configured keys: the key changed, or the value was altered."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return (
            f"The secret {self.name} cannot be decrypted with KANDEV_SECRETS_KEY: the key changed or the stored "
            "value was altered. Set it again on the agent profile, or restore the key it was saved with."
        )


def is_variable_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None


def looks_like_credential(name: str) -> bool:
    """Whether a variable of this name should be a secret (the rule the data migration applied)."""
    return _CREDENTIAL.search(name) is not None


def parse_keys(text: str) -> list[bytes]:
    """The keys of ``KANDEV_SECRETS_KEY``: comma-separated Fernet keys, the sealing one first."""
    keys = [part.strip().encode() for part in text.split(",") if part.strip()]
    if not keys:
        raise SecretsKeyError("KANDEV_SECRETS_KEY is empty.")
    for position, key in enumerate(keys, start=1):
        try:
            Fernet(key)
        except ValueError:
            raise SecretsKeyError(
                f"Key {position} of KANDEV_SECRETS_KEY is not a Fernet key (32 bytes in URL-safe base64); make one "
                'with: python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
            ) from None
    return keys


def derived_key(secret_key: str) -> bytes:
    """A Fernet key derived from Django's ``SECRET_KEY``: the embedded (dev, e2e) default only.

    Changing the ``SECRET_KEY`` then makes every stored secret unreadable,
    which is why ``prod`` must name its own key.
    """
    digest = hashlib.sha256(b"kandev-secrets-key:" + secret_key.encode()).digest()
    return base64.urlsafe_b64encode(digest)


class SecretBox:
    """Seals and opens secret values with a key ring; values never appear in its ``repr``."""

    def __init__(self, keys: list[bytes]) -> None:
        if not keys:
            raise SecretsKeyError("A SecretBox needs at least one key.")
        self._fernet = MultiFernet([Fernet(key) for key in keys])

    def __repr__(self) -> str:
        return "<SecretBox>"

    def seal(self, value: str) -> str:
        return self._fernet.encrypt(value.encode("utf-8", "surrogatepass")).decode("ascii")

    def open(self, name: str, token: str) -> str:
        """The value ``token`` sealed; ``SecretUnreadable`` (naming ``name``) when it does not open."""
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8", "surrogatepass")
        except (InvalidToken, UnicodeError, AttributeError):
            raise SecretUnreadable(name) from None

    def open_all(self, sealed: Mapping[str, str]) -> dict[str, str]:
        return {name: self.open(name, token) for name, token in sealed.items()}

    def rotate(self, name: str, token: str) -> str:
        """``token`` sealed again with the first key (``MultiFernet.rotate``)."""
        try:
            return self._fernet.rotate(token.encode("ascii")).decode("ascii")
        except (InvalidToken, UnicodeError, AttributeError):
            raise SecretUnreadable(name) from None
