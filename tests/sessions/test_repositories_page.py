"""The workspace's repositories page: its admins register a git repository (checked by git), and remove an unused one.

Where an admin may register one (``KANDEV_REPOSITORY_ROOTS``) is tested in ``tests/test_roles.py``.
"""

import subprocess

import pytest
from django.test import Client

from kandev_web.repositories.models import Repository
from kandev_web.sessions import tasks


def url(workspace, rest=""):
    return f"/settings/workspaces/{workspace.pk}/repositories/{rest}"


@pytest.fixture(autouse=True)
def repository_roots(settings, tmp_path):
    """Workspace admins register repositories under the test's directory."""
    settings.KANDEV_REPOSITORY_ROOTS = [str(tmp_path)]


@pytest.fixture
def git_repository(tmp_path):
    path = tmp_path / "shop"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(path)], check=True)
    author = ["-c", "user.email=dev@example.com", "-c", "user.name=Dev"]
    subprocess.run(["git", "-C", str(path), *author, "commit", "-q", "--allow-empty", "-m", "Start"], check=True)
    return path


def test_only_admins_of_the_workspace_reach_it(make_operator, workspace):
    member = Client()
    member.force_login(make_operator("bob", workspace=workspace))
    stranger = Client()
    stranger.force_login(make_operator("eve", staff=True))

    assert Client().get(url(workspace)).status_code == 302
    assert member.get(url(workspace)).status_code == 403
    assert stranger.get(url(workspace)).status_code == 404


def test_registering_a_repository_detects_its_branch_and_lists_it(staff_client, workspace, git_repository):
    response = staff_client.post(url(workspace), {"name": "shop", "path": str(git_repository), "default_branch": ""})

    assert response.status_code == 302
    repository = Repository.objects.get(workspace=workspace, name="shop")
    assert (repository.path, repository.default_branch) == (str(git_repository), "trunk")
    page = staff_client.get(url(workspace)).text
    assert 'data-testid="repository-card"' in page
    assert "From trunk; 0 tasks on it." in page


def test_a_path_that_is_no_git_repository_is_refused_with_a_sentence(staff_client, workspace, tmp_path):
    response = staff_client.post(url(workspace), {"name": "plain", "path": str(tmp_path), "default_branch": ""})

    assert response.status_code == 200
    assert f"{tmp_path} is not a git repository." in response.text
    assert not Repository.objects.exists()


def test_a_repository_with_tasks_on_it_is_not_removed_and_the_page_says_why(
    staff_client, workspace, board, git_repository
):
    repository = Repository(workspace=workspace, name="shop", path=str(git_repository))
    repository.full_clean()
    repository.save()
    tasks.create_task(board, title="On it", description="", step=board.steps.first(), repository=repository)

    refused = staff_client.post(url(workspace, f"{repository.pk}/delete/"))

    assert refused.status_code == 409
    assert "shop still has tasks on it; delete those tasks (and their worktrees) first." in refused.text
    assert Repository.objects.filter(pk=repository.pk).exists()


def test_an_unused_repository_is_removed(staff_client, workspace, git_repository):
    repository = Repository.objects.create(workspace=workspace, name="shop", path=str(git_repository))

    assert staff_client.post(url(workspace, f"{repository.pk}/delete/")).status_code == 302
    assert not Repository.objects.filter(pk=repository.pk).exists()
    assert git_repository.is_dir()  # the repository itself is never touched
