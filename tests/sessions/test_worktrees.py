"""A worktree per task, with real git in temporary repositories.

Every test here runs git itself: the branch a task's agent works on, the
directory it works in, what a later session finds there, what another task on
the same repository sees, what removing the task may and may not throw away.
Each runs twice: with the repository on the web machine, and on an executor
host (the real sshd scripts/test runs, ``kandev-checkout`` doing the git work there).
"""

import subprocess
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_web import checkouts, git
from kandev_web.agents.models import Executor
from kandev_web.board.models import Task
from kandev_web.repositories import worktrees
from kandev_web.repositories.models import Repository, Worktree
from kandev_web.sessions import events, services, tasks
from kandev_web.sessions.models import Message, MessageType, TaskSession
from testing_support.executor import ssh_test_host_fields, unreachable_ssh_host

#: Run on PostgreSQL too: the worktree row is locked while git works, which SQLite and PostgreSQL do differently.
pytestmark = pytest.mark.postgres


def sh(cwd, *args) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    sh(path, "init", "-q", "-b", "main")
    sh(path, "config", "user.email", "dev@example.com")
    sh(path, "config", "user.name", "Dev")
    (path / "README.md").write_text("# Demo\n\nFirst line.\n")
    sh(path, "add", "README.md")
    sh(path, "commit", "-q", "-m", "Start")
    return path


def commit_in(worktree: Path, name: str, text: str, message: str) -> None:
    (worktree / name).write_text(text)
    sh(worktree, "add", name)
    sh(worktree, "-c", "user.email=agent@example.com", "-c", "user.name=Agent", "commit", "-q", "-m", message)


@pytest.fixture(params=["web machine", "ssh host"])
def machine(request, db, tmp_path):
    """Where the repository is, and its agents run: None for the web machine, else that executor host."""
    if request.param == "web machine":
        return None
    return Executor.objects.create(
        name="gpu-1",
        **ssh_test_host_fields(),
        workdir_root=str(tmp_path / "executor" / "workdirs"),
        worktree_root=str(tmp_path / "executor" / "worktrees"),
    )


@pytest.fixture
def root(tmp_path, settings, machine):
    settings.KANDEV_WORKTREE_ROOT = tmp_path / "worktrees"
    return settings.KANDEV_WORKTREE_ROOT if machine is None else tmp_path / "executor" / "worktrees"


@pytest.fixture
def repository(tmp_path, workspace, root, machine):
    repository = Repository(workspace=workspace, name="demo", path=str(make_repo(tmp_path / "demo")), executor=machine)
    repository.full_clean()
    repository.save()
    return repository


@pytest.fixture
def profile(make_profile, machine):
    return make_profile(executor=machine)


@pytest.fixture
def launched(monkeypatch):
    """The launch plans start_session hands the runner, instead of starting agentctl."""
    plans = []

    class Runner:
        def start(self, plan, prompt, turn_id):
            return plan

        def submit(self, plan):
            plans.append(plan)

    monkeypatch.setattr(services, "runner", Runner())
    return plans


@pytest.fixture
def start(profile, launched, django_capture_on_commit_callbacks):
    def start(task, prompt="Go"):
        with django_capture_on_commit_callbacks(execute=True):
            session = services.start_session(task, profile, prompt, "http://127.0.0.1/mcp/")
        return session, launched[-1]

    return start


@pytest.fixture
def new_task(board, repository):
    def new_task(title="Fix the login page", *, base_branch="", repository=repository):
        return tasks.create_task(
            board, title=title, description="", step=board.steps.first(), repository=repository, base_branch=base_branch
        )

    return new_task


# --- A branch per task, made the first time, reused after --------------------------------------------------


def test_the_first_agent_on_a_task_works_in_a_new_worktree_on_a_branch_named_after_the_task(new_task, start, root):
    task = new_task("Fix the login page")

    _, plan = start(task)

    worktree = Worktree.objects.get(task=task)
    assert worktree.branch == f"kandev/task-{task.pk}-fix-the-login-page"
    assert plan.workdir == worktree.path
    assert Path(worktree.path).parent == root.resolve()
    assert sh(worktree.path, "branch", "--show-current") == worktree.branch
    assert Path(worktree.path, "README.md").read_text().startswith("# Demo")
    assert worktree.base_commit == sh(worktree.repository.path, "rev-parse", "main")


def test_a_later_session_of_the_task_reuses_its_worktree_and_finds_the_work_there(new_task, start):
    task = new_task()
    _, first = start(task)
    Path(first.workdir, "notes.txt").write_text("half done\n")

    _, second = start(task, "Carry on")

    assert second.workdir == first.workdir
    assert Path(second.workdir, "notes.txt").read_text() == "half done\n"
    assert Worktree.objects.filter(task=task).count() == 1
    assert len(sh(first.workdir, "worktree", "list", "--porcelain").split("\n\n")) == 2  # the repository and this one


def test_two_tasks_on_one_repository_never_share_a_checkout(new_task, start):
    one, other = new_task("Same title"), new_task("Same title")
    _, one_plan = start(one)
    _, other_plan = start(other)

    assert one_plan.workdir != other_plan.workdir
    one_branch = sh(one_plan.workdir, "branch", "--show-current")
    other_branch = sh(other_plan.workdir, "branch", "--show-current")
    assert one_branch != other_branch
    Path(one_plan.workdir, "README.md").write_text("changed by one\n")
    assert Path(other_plan.workdir, "README.md").read_text().startswith("# Demo")


def test_a_branch_name_already_taken_in_the_repository_gets_a_suffix(new_task, start, repository):
    task = new_task("Fix the login page")
    sh(repository.path, "branch", f"kandev/task-{task.pk}-fix-the-login-page")

    start(task)

    assert Worktree.objects.get(task=task).branch == f"kandev/task-{task.pk}-fix-the-login-page-2"


def test_a_task_may_start_from_a_base_branch_of_its_own(new_task, start, repository):
    sh(repository.path, "checkout", "-q", "-b", "release")
    commit_in(Path(repository.path), "RELEASE.md", "1.0\n", "Release")
    sh(repository.path, "checkout", "-q", "main")
    task = new_task(base_branch="release")

    _, plan = start(task)

    assert Path(plan.workdir, "RELEASE.md").read_text() == "1.0\n"
    assert Worktree.objects.get(task=task).base_commit == sh(repository.path, "rev-parse", "release")


def test_a_worktree_removed_by_hand_is_checked_out_again_from_its_branch(new_task, start):
    task = new_task()
    _, first = start(task)
    commit_in(Path(first.workdir), "work.txt", "kept on the branch\n", "Work")
    subprocess.run(["rm", "-rf", first.workdir], check=True)

    _, second = start(task)

    assert Path(second.workdir, "work.txt").read_text() == "kept on the branch\n"


def test_a_task_without_a_repository_works_where_it_always_did(make_task, start, tmp_path):
    _, plan = start(make_task("No repository"))

    assert plan.workdir == ""  # the profile's working directory, or var/workdirs/task-<id>
    assert not Worktree.objects.exists()


# --- Failures, in a sentence --------------------------------------------------------------------------------


def test_registering_a_path_that_is_not_a_git_repository_says_so(workspace, tmp_path, machine):
    plain = tmp_path / "plain"
    plain.mkdir()

    with pytest.raises(ValidationError) as raised:
        Repository(workspace=workspace, name="plain", path=str(plain), executor=machine).full_clean()

    assert raised.value.message_dict["path"] == [f"{plain} is not a git repository."]


def test_registering_a_repository_on_an_executor_host_that_cannot_be_reached_says_so(workspace, tmp_path):
    gone = Executor.objects.create(name="gpu-9", **unreachable_ssh_host())

    with pytest.raises(ValidationError) as raised:
        Repository(workspace=workspace, name="far", path=str(make_repo(tmp_path / "far")), executor=gone).full_clean()

    assert raised.value.messages[0].startswith("gpu-9 could not be reached to check the repository:")


def test_registering_a_repository_detects_its_default_branch(workspace, tmp_path, machine):
    path = make_repo(tmp_path / "trunk")
    sh(path, "branch", "-m", "main", "trunk")
    repository = Repository(workspace=workspace, name="trunk", path=str(path), executor=machine)

    repository.full_clean()

    assert repository.default_branch == "trunk"


def test_a_repository_gone_from_disk_starts_no_agent_and_says_why(new_task, start, repository, launched):
    task = new_task()
    subprocess.run(["rm", "-rf", repository.path], check=True)

    with pytest.raises(services.SessionActionError, match="is not a git repository any more"):
        start(task)

    assert not TaskSession.objects.filter(task=task).exists()
    assert launched == []


def test_a_branch_checked_out_elsewhere_is_refused_with_a_sentence(new_task, start, repository, tmp_path):
    task = new_task()
    _, plan = start(task)
    branch = Worktree.objects.get(task=task).branch
    subprocess.run(["rm", "-rf", plan.workdir], check=True)
    sh(repository.path, "worktree", "prune")
    sh(repository.path, "worktree", "add", "-q", str(tmp_path / "by-hand"), branch)

    with pytest.raises(services.SessionActionError, match=f"The branch {branch} is checked out in another worktree"):
        start(task)


def test_an_agent_on_another_machine_than_the_repository_is_refused_with_a_sentence(new_task, start, profile, machine):
    other = Executor.objects.create(name="gpu-2", **unreachable_ssh_host())
    profile.executor = None if machine else other
    profile.save()
    where = "gpu-1" if machine else "the web machine"
    agents = "the web machine" if machine else "gpu-2"

    with pytest.raises(services.SessionActionError, match=f"demo is on {where}, but Mock runs its agents on {agents}."):
        start(new_task())


def test_an_executor_host_gone_away_starts_no_agent_and_says_why(new_task, start, repository, profile, launched):
    repository.executor = profile.executor = Executor.objects.create(name="gpu-9", **unreachable_ssh_host())
    repository.save()
    profile.save()

    with pytest.raises(services.SessionActionError, match="gpu-9, which holds demo, could not be reached: "):
        start(new_task())

    assert launched == []


def test_the_start_button_shows_the_sentence_as_a_toast(new_task, operator_client, profile, repository):
    task = new_task()
    subprocess.run(["rm", "-rf", repository.path], check=True)

    form = {"profile": profile.pk, "prompt": "Go"}
    response = operator_client.post(f"/tasks/{task.pk}/sessions/", form, HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert "is not a git repository any more" in response.content.decode()
    assert not TaskSession.objects.filter(task=task).exists()


# --- What a turn changed ------------------------------------------------------------------------------------


def test_after_a_turn_the_task_page_shows_each_changed_file_with_its_diff_against_the_base(
    new_task, start, operator_client
):
    task = new_task()
    session, plan = start(task)
    Path(plan.workdir, "README.md").write_text("# Demo\n\nSecond line.\n")
    Path(plan.workdir, "hello.py").write_text("print('hello')\n")
    commit_in(Path(plan.workdir), "committed.txt", "on the branch\n", "Agent's commit")

    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "end_turn"})

    changes = Message.objects.get(session=session, type=MessageType.WORKTREE_CHANGES)
    by_path = {diff["path"]: diff for diff in changes.metadata["diffs"]}
    assert sorted(by_path) == ["README.md", "committed.txt", "hello.py"]
    assert {"kind": "del", "text": "First line."} in by_path["README.md"]["lines"]
    assert {"kind": "add", "text": "Second line."} in by_path["README.md"]["lines"]
    assert by_path["hello.py"]["old_path"] == "/dev/null"
    page = operator_client.get(f"/tasks/{task.pk}/").content.decode()
    assert 'data-testid="worktree-diff" data-path="hello.py"' in page
    assert "+print(&#x27;hello&#x27;)" in page
    assert f'data-branch="{changes.metadata["branch"]}"' in page


def test_a_turn_that_changed_many_files_shows_some_and_counts_the_rest(new_task, start, operator_client, monkeypatch):
    monkeypatch.setattr(worktrees, "MAX_FILES", 2)
    task = new_task()
    session, plan = start(task)
    for name in ("a.txt", "b.txt", "c.txt"):
        Path(plan.workdir, name).write_text(f"{name}\n")

    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "end_turn"})

    changes = Message.objects.get(type=MessageType.WORKTREE_CHANGES).metadata
    assert [diff["path"] for diff in changes["diffs"]] == ["a.txt", "b.txt"]
    assert "1 more file not shown." in operator_client.get(f"/tasks/{task.pk}/").content.decode()


def test_a_turn_that_changed_nothing_adds_nothing_to_the_timeline(new_task, start):
    session, _ = start(new_task())

    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "end_turn"})

    assert not Message.objects.filter(type=MessageType.WORKTREE_CHANGES).exists()


def test_a_symlink_out_of_the_worktree_shows_as_its_target_never_the_file_it_points_at(new_task, start, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not show me\n")
    session, plan = start(new_task())
    Path(plan.workdir, "link").symlink_to(secret)

    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "end_turn"})

    changes = Message.objects.get(type=MessageType.WORKTREE_CHANGES).metadata["diffs"]
    assert [line["text"] for line in changes[0]["lines"] if line["kind"] == "add"] == [str(secret)]


# --- Removing the task ---------------------------------------------------------------------------------------


def test_deleting_a_task_with_commits_found_nowhere_else_is_refused_until_confirmed(new_task, start, operator_client):
    task = new_task()
    _, plan = start(task)
    worktree = Worktree.objects.get(task=task)
    commit_in(Path(plan.workdir), "work.txt", "only here\n", "Unpushed work")

    refused = operator_client.post(f"/tasks/{task.pk}/delete/", {"remove_worktree": "1"})

    assert refused.status_code == 409
    assert refused.content.decode() == (
        f"The branch {worktree.branch} holds 1 commit(s) that exist nowhere else; "
        "confirm that they may be discarded to remove it."
    )
    assert Task.objects.filter(pk=task.pk).exists()
    assert Path(plan.workdir, "work.txt").exists()

    confirmed = operator_client.post(f"/tasks/{task.pk}/delete/", {"remove_worktree": "1", "discard_commits": "1"})

    assert confirmed.status_code == 302
    assert not Task.objects.filter(pk=task.pk).exists()
    assert not Path(plan.workdir).exists()
    assert not git.branch_exists(Path(worktree.repository.path), worktree.branch)


def test_a_branch_whose_commits_are_merged_is_removed_without_asking(new_task, start, operator_client, repository):
    task = new_task()
    _, plan = start(task)
    worktree = Worktree.objects.get(task=task)
    commit_in(Path(plan.workdir), "work.txt", "merged\n", "Merged work")
    sh(repository.path, "merge", "-q", "--ff-only", worktree.branch)

    response = operator_client.post(f"/tasks/{task.pk}/delete/", {"remove_worktree": "1"})

    assert response.status_code == 302
    assert not Path(plan.workdir).exists()
    assert not git.branch_exists(Path(repository.path), worktree.branch)


def test_commits_pushed_to_a_remote_exist_elsewhere_so_removal_does_not_ask(new_task, start, operator_client, tmp_path):
    task = new_task()
    _, plan = start(task)
    branch = Worktree.objects.get(task=task).branch
    commit_in(Path(plan.workdir), "work.txt", "pushed\n", "Pushed work")
    sh(tmp_path, "init", "-q", "--bare", "remote.git")
    sh(plan.workdir, "remote", "add", "origin", str(tmp_path / "remote.git"))
    sh(plan.workdir, "push", "-q", "origin", branch)

    response = operator_client.post(f"/tasks/{task.pk}/delete/", {"remove_worktree": "1"})

    assert response.status_code == 302
    assert not Path(plan.workdir).exists()


def test_deleting_a_task_without_asking_for_its_worktree_keeps_it_and_its_branch(
    new_task, start, operator_client, repository
):
    task = new_task()
    _, plan = start(task)
    branch = Worktree.objects.get(task=task).branch

    assert operator_client.post(f"/tasks/{task.pk}/delete/").status_code == 302

    assert Path(plan.workdir, "README.md").exists()
    assert git.branch_exists(Path(repository.path), branch)


def test_the_task_page_shows_the_repository_branch_and_the_offer_to_remove_the_worktree(
    new_task, start, operator_client
):
    task = new_task()
    before = operator_client.get(f"/tasks/{task.pk}/").content.decode()
    assert 'data-testid="task-repository"' in before
    assert "task-delete-remove-worktree" not in before  # nothing made yet, nothing to remove
    start(task)

    page = operator_client.get(f"/tasks/{task.pk}/").content.decode()

    assert f'data-branch="{Worktree.objects.get(task=task).branch}" data-base="main"' in page
    assert 'data-testid="task-delete-remove-worktree"' in page


def test_the_board_card_offers_removing_the_worktree_once_there_is_one_and_refuses_the_same_way(
    new_task, start, operator_client, board
):
    task = new_task()
    plain = operator_client.get(f"/boards/{board.pk}/").content.decode()
    assert "task-delete-remove-worktree" not in plain  # nothing made yet: Delete asks only "Delete …?"
    _, plan = start(task)
    worktree = Worktree.objects.get(task=task)
    commit_in(Path(plan.workdir), "work.txt", "only here\n", "Unpushed work")

    board_page = operator_client.get(f"/boards/{board.pk}/").content.decode()
    assert f"Also remove its worktree and the branch {worktree.branch}" in board_page
    assert 'data-testid="task-delete-discard-commits"' in board_page

    refused = operator_client.post(
        f"/tasks/{task.pk}/delete/", {"remove_worktree": "1"}, headers={"HX-Request": "true"}
    )
    assert f"The branch {worktree.branch} holds 1 commit(s) that exist nowhere else" in refused.content.decode()
    assert Task.objects.filter(pk=task.pk).exists()

    confirmed = operator_client.post(
        f"/tasks/{task.pk}/delete/", {"remove_worktree": "1", "discard_commits": "1"}, headers={"HX-Request": "true"}
    )
    assert confirmed.status_code == 200
    assert not Task.objects.filter(pk=task.pk).exists()
    assert not Path(plan.workdir).exists()
    assert not git.branch_exists(Path(worktree.repository.path), worktree.branch)


# --- Branch names --------------------------------------------------------------------------------------------


@settings(max_examples=60)
@given(
    task_id=st.integers(min_value=1, max_value=2**31),
    title=st.text(max_size=120),
    taken=st.sets(st.integers(min_value=1, max_value=5)),
)
def test_a_branch_name_is_a_valid_git_branch_and_never_one_taken(task_id, title, taken):
    stem = worktrees.branch_stem(task_id, title)
    taken_names = {stem if n == 1 else f"{stem}-{n}" for n in taken}

    name = checkouts.free_branch(stem, taken_names.__contains__)

    assert name not in taken_names
    assert name.startswith(f"kandev/task-{task_id}")
    assert git.is_valid_branch_name(Path("."), name)
