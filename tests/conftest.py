import os

import pytest
from asgiref.sync import SyncToAsync
from django.contrib.auth import get_user_model
from django.db import connections
from hypothesis import settings as hypothesis_settings

from kandev_web.board.models import Board, Task, Workspace
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


@pytest.fixture
def make_operator(db):
    def make(username="alice", *, workspace=None, staff=False):
        user = get_user_model().objects.create_user(username, password="pw-123456", is_staff=staff)
        if workspace is not None:
            workspace.members.add(user)
        return user

    return make


@pytest.fixture
def workspace(db):
    return Workspace.objects.create(name="Platform")


@pytest.fixture
def board(workspace):
    board = Board.objects.create(workspace=workspace, name="Main")
    board.add_default_steps()
    return board


@pytest.fixture
def operator(make_operator, workspace):
    return make_operator("alice", workspace=workspace)


@pytest.fixture
def make_task(board):
    def make(title="Task", *, step=None, **fields):
        step = step or board.steps.first()
        return Task.objects.create(board=board, step=step, title=title, **fields)

    return make
