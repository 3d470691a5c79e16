"""The prod profile passes Django's deployment checklist, and will not start without its secret keys.

Each run is a subprocess with a clean environment, the way a deployment starts
(``testing_support.deployment``): nothing from the developer's shell (or from
pytest-django's settings) leaks in.
"""

import secrets

import pytest
from cryptography.fernet import Fernet

from testing_support.deployment import prod_env, run_clean


def test_check_deploy_is_clean_under_the_prod_profile(tmp_path):
    result = run_clean(tmp_path, "manage.py", "check", "--deploy", "--fail-level", "WARNING", **prod_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_is_not_vacuous(tmp_path):
    """The same command fails on a real problem, so a clean run above means something."""
    result = run_clean(tmp_path, "manage.py", "check", "--deploy", "--fail-level", "WARNING", **prod_env(DEBUG="true"))
    assert result.returncode != 0
    assert "security.W018" in result.stdout + result.stderr


@pytest.mark.parametrize("secret_key", [None, ""], ids=["unset", "empty"])
@pytest.mark.parametrize(
    "entry_point",
    [("manage.py", "check"), ("-c", "import kandev_web.asgi")],
    ids=["manage.py", "asgi"],
)
def test_prod_without_a_secret_key_refuses_to_start(tmp_path, secret_key, entry_point):
    env = prod_env()
    if secret_key is None:
        del env["SECRET_KEY"]
    else:
        env["SECRET_KEY"] = secret_key
    result = run_clean(tmp_path, *entry_point, **env)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line, result.stderr
    assert "SECRET_KEY" in last_line, result.stderr


def test_prod_never_falls_back_to_the_dev_key(tmp_path):
    script = "from django.conf import settings; print(settings.SECRET_KEY)"
    key = secrets.token_urlsafe(64)
    result = run_clean(tmp_path, "-c", f"import django; django.setup(); {script}", **prod_env(SECRET_KEY=key))
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
    env = prod_env()
    if secrets_key is None:
        del env["KANDEV_SECRETS_KEY"]
    else:
        env["KANDEV_SECRETS_KEY"] = secrets_key
    result = run_clean(tmp_path, *entry_point, **env)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line, result.stderr
    assert "KANDEV_SECRETS_KEY" in last_line, result.stderr
    assert "Fernet.generate_key()" in last_line


def test_a_secrets_key_that_is_no_fernet_key_refuses_to_start_and_says_how_to_make_one(tmp_path):
    keys = f"{Fernet.generate_key().decode()},hunter2"
    result = run_clean(tmp_path, "manage.py", "check", **prod_env(KANDEV_SECRETS_KEY=keys))
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "Key 2 of KANDEV_SECRETS_KEY is not a Fernet key" in last_line, result.stderr
    assert "hunter2" not in result.stderr
