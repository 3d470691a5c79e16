"""The prod profile passes Django's deployment checklist, and will not start without its secret keys.

Each run is a subprocess with a clean environment, the way a deployment starts:
nothing from the developer's shell (or from pytest-django's settings) leaks in.
"""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "DJANGO_SETTINGS_MODULE": "kandev_web.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        **env,
    }
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )


def _prod(**overrides: str) -> dict[str, str]:
    return {
        "KANDEV_PROFILE": "prod",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "KANDEV_SECRETS_KEY": Fernet.generate_key().decode(),
        "ALLOWED_HOSTS": "kandev.example.com",
        **overrides,
    }


def test_check_deploy_is_clean_under_the_prod_profile(tmp_path):
    result = _run(tmp_path, "manage.py", "check", "--deploy", "--fail-level", "WARNING", **_prod())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_is_not_vacuous(tmp_path):
    """The same command fails on a real problem, so a clean run above means something."""
    result = _run(tmp_path, "manage.py", "check", "--deploy", "--fail-level", "WARNING", **_prod(DEBUG="true"))
    assert result.returncode != 0
    assert "security.W018" in result.stdout + result.stderr


@pytest.mark.parametrize("secret_key", [None, ""], ids=["unset", "empty"])
@pytest.mark.parametrize(
    "entry_point",
    [("manage.py", "check"), ("-c", "import kandev_web.asgi")],
    ids=["manage.py", "asgi"],
)
def test_prod_without_a_secret_key_refuses_to_start(tmp_path, secret_key, entry_point):
    env = _prod()
    if secret_key is None:
        del env["SECRET_KEY"]
    else:
        env["SECRET_KEY"] = secret_key
    result = _run(tmp_path, *entry_point, **env)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line and "SECRET_KEY" in last_line, result.stderr


def test_prod_never_falls_back_to_the_dev_key(tmp_path):
    script = "from django.conf import settings; print(settings.SECRET_KEY)"
    key = secrets.token_urlsafe(64)
    result = _run(tmp_path, "-c", f"import django; django.setup(); {script}", **_prod(SECRET_KEY=key))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == key


@pytest.mark.parametrize("secrets_key", [None, ""], ids=["unset", "empty"])
@pytest.mark.parametrize(
    "entry_point",
    [("manage.py", "check"), ("-c", "import kandev_web.asgi")],
    ids=["manage.py", "asgi"],
)
def test_prod_without_a_secrets_key_refuses_to_start(tmp_path, secrets_key, entry_point):
    """Agent profiles' secrets are sealed with it; prod has no key derived from SECRET_KEY to fall back to."""
    env = _prod()
    if secrets_key is None:
        del env["KANDEV_SECRETS_KEY"]
    else:
        env["KANDEV_SECRETS_KEY"] = secrets_key
    result = _run(tmp_path, *entry_point, **env)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line and "KANDEV_SECRETS_KEY" in last_line, result.stderr
    assert "Fernet.generate_key()" in last_line


def test_a_secrets_key_that_is_no_fernet_key_refuses_to_start_and_says_how_to_make_one(tmp_path):
    keys = f"{Fernet.generate_key().decode()},hunter2"
    result = _run(tmp_path, "manage.py", "check", **_prod(KANDEV_SECRETS_KEY=keys))
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "Key 2 of KANDEV_SECRETS_KEY is not a Fernet key" in last_line, result.stderr
    assert "hunter2" not in result.stderr
