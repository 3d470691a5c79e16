"""Every profile serves its pages under the same strict Content-Security-Policy.

Each profile is a subprocess with a clean environment (as in test_deploy_check),
so what is checked is what a deployment of that profile sends. The browser
suite enforces the policy itself (e2e/conftest.py, e2e/test_csp.py).
"""

import secrets

import pytest
from cryptography.fernet import Fernet

from testing_support.deployment import CSP_POLICY, run_clean

HEADERS = """
import django
django.setup()
from django.test import Client
for path in ("/login/", "/admin/login/"):
    response = Client().get(path, secure=True)
    print(response.status_code, response.headers.get("Content-Security-Policy"))
"""

PROFILES = {
    "dev": {"ALLOWED_HOSTS": "testserver"},
    "e2e": {"ALLOWED_HOSTS": "testserver"},
    "prod": {
        "SECRET_KEY": secrets.token_urlsafe(64),
        "KANDEV_SECRETS_KEY": Fernet.generate_key().decode(),
        "ALLOWED_HOSTS": "testserver",
    },
}


@pytest.mark.parametrize("profile", PROFILES)
def test_the_login_pages_carry_the_strict_policy_in_every_profile(tmp_path, profile, collected):
    # prod pages name hashed static files, which only collectstatic's manifest knows.
    static_root = {"STATIC_ROOT": str(collected)} if profile == "prod" else {}
    result = run_clean(tmp_path, "-c", HEADERS, KANDEV_PROFILE=profile, **PROFILES[profile], **static_root)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2, result.stdout
    for line in lines:
        status, policy = line.split(" ", 1)
        assert status == "200"
        assert {directive.strip() for directive in policy.split(";")} == CSP_POLICY
