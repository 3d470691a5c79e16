"""The unit and process tests' settings and hooks; their shared fixtures are ``testing_support.fixtures``."""

import os

import pytest
from asgiref.sync import SyncToAsync
from django.db import connections
from hypothesis import settings as hypothesis_settings

from kandev_web.db import AGENT_THREAD

# No deadlines: a loaded 2-core CI machine must not turn slowness into failures.
# On CI the examples are derived from the test, so a run can be repeated exactly.
hypothesis_settings.register_profile("default", deadline=None)
hypothesis_settings.register_profile("ci", deadline=None, derandomize=True)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Passwords hashed in a blink: the default hasher takes ~0.3 s a password, by design.

    Tests of login throttling hash one per attempt, and every operator made
    with a password hashes one too. Servers the browser suite starts keep the
    real hasher.
    """
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def close_kept_connections(request):
    """After a test marked postgres, close the connections kandev_web.db keeps in its worker threads.

    They outlive the test, and PostgreSQL cannot drop a database with a
    session open on it: the run would end with the test database in use.
    """
    yield
    if request.node.get_closest_marker("postgres"):
        for executor in (AGENT_THREAD, SyncToAsync.single_thread_executor):
            executor.submit(connections.close_all).result()
