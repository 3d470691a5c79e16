"""A task with a worktree on a real git repository, and a local bare repository as its push remote."""

import subprocess
from pathlib import Path

import pytest

from kandev_web import git
from kandev_web.repositories.models import Repository, Worktree


def sh(cwd, *args) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit_all(worktree: Path, message: str) -> None:
    sh(worktree, "add", "--all")
    sh(worktree, "-c", "user.email=agent@example.com", "-c", "user.name=Agent", "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path) -> Path:
    path = tmp_path / "shop"
    git.init_with_files(
        path, "main", {"README.md": "# Shop\n\nFirst line.\n", "app.py": "def main():\n    return 1\n"}, "Start"
    )
    return path


@pytest.fixture
def bare(tmp_path, repo) -> Path:
    """An empty bare repository: the remote the branch is pushed to."""
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


@pytest.fixture
def repository(workspace, repo) -> Repository:
    return Repository.objects.create(workspace=workspace, name="shop", path=str(repo), default_branch="main")


@pytest.fixture
def worktree(tmp_path, repository, repo, make_task) -> Worktree:
    """The task's worktree on ``kandev/task-N``: one commit on top of main, one uncommitted change, one new file."""
    task = make_task("Fix the cart")
    path = tmp_path / "worktrees" / f"task-{task.pk}"
    branch = f"kandev/task-{task.pk}-fix-the-cart"
    base = git.commit_of(repo, "main")
    git.add_worktree(repo, path, branch, base)
    (path / "app.py").write_text("def main():\n    return 2\n\n\ndef cart():\n    return []\n")
    commit_all(path, "Cart")
    (path / "README.md").write_text("# Shop\n\nFirst line, changed.\n")
    (path / "NOTES.md").write_text("Untracked notes\n")
    return Worktree.objects.create(task=task, repository=repository, branch=branch, path=str(path), base_commit=base)
