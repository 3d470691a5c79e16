"""A deployment stores passwords with Django's slow hasher; only the browser suite's throwaway servers skip it.

Each profile runs in a subprocess with a clean environment, as a deployment of
it would (``testing_support.deployment.run_clean``).
"""

import pytest

from testing_support.deployment import prod_env, run_clean

HASHER = """
import django
django.setup()
from django.contrib.auth.hashers import make_password
print(make_password("correct horse battery staple").split("$")[0])
"""


@pytest.mark.parametrize(
    ("env", "algorithm"),
    [
        ({"KANDEV_PROFILE": "dev"}, "pbkdf2_sha256"),
        (prod_env(), "pbkdf2_sha256"),
        ({"KANDEV_PROFILE": "e2e"}, "md5"),
    ],
    ids=["dev", "prod", "e2e"],
)
def test_only_the_e2e_profile_hashes_passwords_cheaply(tmp_path, env, algorithm):
    result = run_clean(tmp_path, "-c", HASHER, **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == algorithm
