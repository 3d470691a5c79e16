"""Running kandev-web as a deployment starts it: a subprocess with a clean environment, under a profile.

Nothing from the developer's shell (or from pytest-django's settings) leaks
in, so what a test sees is what a deployment of that profile does.
"""

import base64
import os
import secrets
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives.asymmetric import ec

from .processes import ROOT

#: The Content-Security-Policy every profile sends, as its set of directives.
CSP_POLICY = {
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
}


def run_clean(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python *args`` from the repository, with ``home`` as HOME and its SQLite database, and only ``env`` added."""
    clean = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "DJANGO_SETTINGS_MODULE": "kandev_web.settings",
        "DATABASE_URL": f"sqlite:///{home / 'db.sqlite3'}",
        **env,
    }
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60)


def vapid_private_key() -> str:
    """A fresh VAPID private key as ``KANDEV_VAPID_PRIVATE_KEY`` takes one: the P-256 scalar, base64url."""
    key = ec.generate_private_key(ec.SECP256R1())
    return base64.urlsafe_b64encode(key.private_numbers().private_value.to_bytes(32, "big")).rstrip(b"=").decode()


def prod_env(**overrides: str) -> dict[str, str]:
    """The prod profile's settings with fresh secret keys, and ``overrides``."""
    return {
        "KANDEV_PROFILE": "prod",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "KANDEV_SECRETS_KEY": Fernet.generate_key().decode(),
        "ALLOWED_HOSTS": "kandev.example.com",
        "KANDEV_PUBLIC_URL": "https://kandev.example.com",
        "KANDEV_VAPID_PRIVATE_KEY": vapid_private_key(),
        **overrides,
    }
