"""What ``scripts/run`` gives a newcomer: ``manage.py demo`` on a fresh database, as scripts/run runs it.

The demo must show the product with nothing to configure: a task on a real
git repository whose mock agent asks a structured question the operator can
answer, with ``features.acpElicitation`` on through a stored override while
the spec's profile defaults stay off.
"""

import io
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Task
from kandev_web.flags.models import FlagOverride
from kandev_web.flags.registry import ACP_ELICITATION
from kandev_web.flags.resolution import Source, profile_values
from kandev_web.flags.services import flag_state, runtime_flags
from kandev_web.repositories.models import Repository, Worktree
from kandev_web.sessions.management.commands.demo import DEMO_QUESTION_TASK, DEMO_REPOSITORY


@pytest.fixture
def var_dir(tmp_path, settings):
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    settings.KANDEV_WORKTREE_ROOT = tmp_path / "worktrees"
    return settings.VAR_DIR


def run_demo(*args: str) -> None:
    call_command("demo", *args, stdout=io.StringIO())


def git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.django_db
def test_a_fresh_demo_turns_the_elicitation_flag_on_by_a_stored_override_and_leaves_the_profiles_off(var_dir):
    run_demo()

    state = flag_state(ACP_ELICITATION)
    assert (state.effective_value, state.source, state.override_value) == (True, Source.OVERRIDE, True)
    assert runtime_flags()[ACP_ELICITATION] is True
    assert profile_values()[ACP_ELICITATION] == {"prod": "false", "dev": "false", "e2e": "false"}


@pytest.mark.django_db
def test_a_fresh_demo_registers_a_git_repository_under_var_and_a_first_task_on_it(var_dir):
    run_demo()

    repository = Repository.objects.get(name=DEMO_REPOSITORY)
    path = Path(repository.path)
    assert path.is_relative_to(var_dir)
    repository.full_clean()  # what the admin checks: a git repository with that branch
    assert repository.default_branch == "main"
    assert git(path, "log", "--format=%s", "main") == "Start the demo repository"
    assert set(git(path, "ls-files").split()) == {"README.md", "app.py"}

    title, _ = DEMO_QUESTION_TASK
    first = Task.objects.filter(board__workspace=repository.workspace).first()
    assert first.title == title
    assert Worktree.objects.get(task=first).repository == repository
    assert AgentProfile.objects.get(workspace=repository.workspace).agent_id == "mock-agent"


@pytest.mark.django_db
def test_running_the_demo_again_adds_nothing_and_keeps_the_operators_own_flag_choice(var_dir):
    run_demo()
    FlagOverride.objects.filter(key=ACP_ELICITATION).update(value=False)  # an operator turned it off since
    head = git(var_dir / "demo-repository", "rev-parse", "HEAD")

    run_demo()

    assert Repository.objects.count() == 1
    assert Worktree.objects.count() == 1
    assert Task.objects.filter(title=DEMO_QUESTION_TASK[0]).count() == 1
    assert Task.objects.count() == 4
    assert flag_state(ACP_ELICITATION).effective_value is False
    assert git(var_dir / "demo-repository", "rev-parse", "HEAD") == head


@pytest.mark.django_db
def test_without_the_showcase_the_flag_is_left_alone_and_no_repository_is_made(var_dir):
    run_demo("--no-showcase")

    assert not FlagOverride.objects.exists()
    assert flag_state(ACP_ELICITATION).effective_value is False
    assert not Repository.objects.exists()
    assert not (var_dir / "demo-repository").exists()
    assert not Task.objects.filter(title=DEMO_QUESTION_TASK[0]).exists()


@pytest.mark.django_db
def test_the_demo_task_page_offers_the_structured_question_by_name_with_nothing_to_configure(var_dir):
    run_demo()
    client = Client()
    client.force_login(get_user_model().objects.get(username="demo"))
    task = Task.objects.get(title=DEMO_QUESTION_TASK[0])

    page = client.get(f"/tasks/{task.pk}/").text

    assert 'data-testid="session-start-scenario"' in page
    assert '<option value="elicit-single">Ask a structured question</option>' in page
    # The mock agent is the only profile, so the picker is shown from the start.
    assert 'data-testid="session-start-scenario-field" hidden' not in page


@pytest.mark.django_db
def test_without_git_the_demo_still_makes_the_question_task_and_says_why_there_is_no_repository(var_dir, monkeypatch):
    monkeypatch.setenv("PATH", str(var_dir))  # no git on it
    errors = io.StringIO()

    call_command("demo", stdout=io.StringIO(), stderr=errors)

    assert "No demo repository: git failed" in errors.getvalue()
    assert not Repository.objects.exists()
    task = Task.objects.get(title=DEMO_QUESTION_TASK[0])
    assert not Worktree.objects.filter(task=task).exists()
    assert flag_state(ACP_ELICITATION).effective_value is True
