"""The fixtures every test suite shares, defined once: operators and their logged-in clients, a
workspace with its board, and factories for tasks, agent profiles and sessions.

Registered by the root ``conftest.py`` (``pytest_plugins``), so ``tests/``
and ``e2e/`` see the same ones. A test module that needs a variant builds a
thin fixture on the factory here (``make_client``, ``make_session``…) rather
than another copy: what is different is then all that it says.
"""

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Board, Role, Task, Workspace
from kandev_web.sessions.models import AgentExecution, SessionState, TaskSession, Turn

from .processes import ROOT, server_environ


@pytest.fixture
def make_operator(db):
    def make(username="alice", *, workspace=None, staff=False, superuser=False):
        """``staff``: an admin of ``workspace`` (its settings pages are theirs); ``superuser``: the deployment's too."""
        user = get_user_model().objects.create_user(
            username, password="pw-123456", is_staff=staff or superuser, is_superuser=superuser
        )
        if workspace is not None:
            workspace.members.add(user, through_defaults={"role": Role.ADMIN if staff else Role.MEMBER})
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
    """Alice, a member of the workspace."""
    return make_operator("alice", workspace=workspace)


@pytest.fixture
def staff(make_operator, workspace):
    """Root, an admin of the workspace, not a superuser: its settings pages (profiles, repositories, webhooks)."""
    return make_operator("root", workspace=workspace, staff=True)


@pytest.fixture
def superuser(make_operator, workspace):
    """Ada, a superuser in the workspace: the deployment's settings (feature flags, /metrics) are hers too."""
    return make_operator("ada", workspace=workspace, superuser=True)


@pytest.fixture
def make_client(db):
    """``make_client(user, **options)``: a test client (``Client(**options)``) logged in as ``user``."""

    def make(user, **options):
        client = Client(**options)
        client.force_login(user)
        return client

    return make


@pytest.fixture
def operator_client(make_client, operator):
    return make_client(operator)


@pytest.fixture
def staff_client(make_client, staff):
    return make_client(staff)


@pytest.fixture
def superuser_client(make_client, superuser):
    return make_client(superuser)


@pytest.fixture
def make_task(board):
    def make(title="Task", *, step=None, **fields):
        step = step or board.steps.first()
        return Task.objects.create(board=board, step=step, title=title, **fields)

    return make


@pytest.fixture
def make_profile(workspace):
    """``make_profile(name, **fields)``: an agent profile of the workspace, by default the mock agent doing nothing."""

    def make(name="Mock", *, agent_id="mock", command=("true",), **fields):
        fields.setdefault("workspace", workspace)
        return AgentProfile.objects.create(name=name, agent_id=agent_id, command=list(command), **fields)

    return make


@pytest.fixture
def make_session(db):
    """``make_session(task, **fields)``: a session of ``task``, by default running with an open turn.

    ``turn`` gives the open turn's fields, or ``None`` for a session without one.
    """

    def make(task, *, state=SessionState.RUNNING, turn=(), **fields):
        session = TaskSession.objects.create(task=task, state=state, **fields)
        if turn is not None:
            Turn.objects.create(session=session, **dict(turn))
        return session

    return make


@pytest.fixture
def make_execution(db):
    """``make_execution(session)``: the session's agentctl, at an address nothing listens on.

    Tests that reach it put a fake runner in its place; a test that forgot would fail at once.
    """

    def make(session, **fields):
        fields = {"url": "ws://127.0.0.1:1/agent/stream", "token": "t", **fields}
        return AgentExecution.objects.create(session=session, **fields)

    return make


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory) -> Path:
    """A migrated SQLite database that test servers start from a copy of (:func:`fresh_sqlite`), made once per run.

    Migrating costs seconds of CPU: the first xdist worker to ask makes it in
    the folder the run's workers share, the others wait for it.
    """
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # this run's folder, above each worker's own
    database = shared / "template.sqlite3"
    with (shared / "template.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not database.exists():
            partial = shared / "template.partial.sqlite3"
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=server_environ(partial, {}), check=True
            )
            partial.rename(database)
    return database


def copy_database(migrated: Path, folder: Path) -> Path:
    """``folder``/db.sqlite3, a copy of ``migrated``: a database a server has to itself."""
    database = folder / "db.sqlite3"
    shutil.copy(migrated, database)
    return database


@pytest.fixture
def fresh_sqlite(migrated_database, tmp_path) -> Path:
    """A migrated database of the test's own, for a server it starts: ``DATABASE_URL`` names it."""
    return copy_database(migrated_database, tmp_path)
