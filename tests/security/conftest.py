"""What the security suite's prod-profile subprocesses share."""

import pytest

from testing_support.deployment import prod_env, run_clean


@pytest.fixture(scope="session")
def collected(tmp_path_factory):
    """``manage.py collectstatic`` under the prod profile, as a deployment runs it once per release."""
    root = tmp_path_factory.mktemp("static-root")
    home = tmp_path_factory.mktemp("home")
    result = run_clean(home, "manage.py", "collectstatic", "--no-input", "-v0", **prod_env(STATIC_ROOT=str(root)))
    assert result.returncode == 0, result.stderr
    return root
