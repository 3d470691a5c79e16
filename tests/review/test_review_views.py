"""The review page and its actions over HTTP: who may see it, the diff it shows, comments, sending them, pushing."""

import re
from pathlib import Path

import pytest
from django.test import Client

from kandev_web.board.models import TaskState, Workspace
from kandev_web.repositories import review
from kandev_web.repositories.models import Repository, ReviewComment, Worktree
from kandev_web.sessions import runner as runner_module
from kandev_web.sessions import services
from kandev_web.sessions.models import Message, SessionState, TaskSession, Turn

from .conftest import sh


class RecordingRunner:
    """The runner, as far as a prompt goes: what would reach agentctl, recorded and not sent."""

    def __init__(self):
        self.calls = []

    def call(self, coroutine, timeout=None):
        self.calls.append(coroutine.__qualname__)
        coroutine.close()


@pytest.fixture
def runner(monkeypatch):
    fake = RecordingRunner()
    monkeypatch.setattr(services, "runner", fake)
    monkeypatch.setattr(runner_module, "runner", fake)
    return fake


@pytest.fixture
def url(worktree):
    return f"/tasks/{worktree.task_id}/review/"


@pytest.fixture
def idle_session(worktree, make_session, make_execution):
    """The task's agent, its last turn over: it takes a prompt."""
    session = make_session(worktree.task, acp_session_id="acp-1", state=SessionState.WAITING_FOR_INPUT, turn=None)
    Turn.objects.create(session=session, completed_at="2026-12-01T10:00:00Z", stop_reason="end_turn")
    make_execution(session)
    return session


def tags_with(html: str, testid: str) -> list[str]:
    return re.findall(rf'<[^>]*data-testid="{testid}"[^>]*>', html)


# --- Who sees it -------------------------------------------------------------------------------------------


def test_a_member_of_the_workspace_sees_every_file_the_branch_changed_committed_uncommitted_and_new(
    operator_client, url, worktree
):
    response = operator_client.get(url)
    assert response.status_code == 200
    html = response.text
    files = {
        path: kind
        for path, kind in re.findall(r'data-testid="review-file" data-path="([^"]+)" data-kind="(\w+)"', html)
    }
    assert files == {"NOTES.md": "added", "README.md": "modified", "app.py": "modified"}
    assert f'data-branch="{worktree.branch}"' in html
    # app.py's new lines are numbered on the new side, and highlighted (Pygments' classed spans).
    assert re.search(r'data-kind="add" data-line="5"[^>]*>.*?<span class="k">def</span>', html)


def test_the_task_page_links_to_the_review_once_the_task_has_a_branch(operator_client, worktree):
    html = operator_client.get(f"/tasks/{worktree.task_id}/").text
    assert f'href="/tasks/{worktree.task_id}/review/"' in html
    Worktree.objects.filter(pk=worktree.pk).update(branch="", path="")
    assert "task-review-link" not in operator_client.get(f"/tasks/{worktree.task_id}/").text


def test_another_workspaces_operator_gets_a_404_and_a_stranger_the_login_page(
    make_operator, make_client, url, worktree
):
    bob = make_operator("bob", workspace=Workspace.objects.create(name="Elsewhere"))
    client = make_client(bob)
    assert client.get(url).status_code == 404
    assert client.post(f"{url}comments/", {"path": "app.py", "line": 1, "text": "x"}).status_code == 404
    assert client.post(f"{url}push/").status_code == 404
    assert client.post(f"{url}send/").status_code == 404
    assert not ReviewComment.objects.exists()
    assert Client().get(url).status_code == 302


def test_a_task_without_a_branch_has_no_review(operator_client, make_task):
    task = make_task("Not started")
    assert operator_client.get(f"/tasks/{task.pk}/review/").status_code == 404


def test_actions_need_the_csrf_token(operator, worktree, url):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    assert client.post(f"{url}comments/", {"path": "app.py", "line": 2, "text": "x"}).status_code == 403
    assert client.post(f"{url}push/").status_code == 403
    assert client.get(f"{url}push/").status_code in (403, 405)
    assert not ReviewComment.objects.exists()


def test_an_agents_file_is_shown_escaped(operator_client, url, worktree):
    Path(worktree.path, "evil.html").write_text('<img src=x onerror="alert(1)">\n<script>alert(2)</script>\n')
    html = operator_client.get(url).text
    assert "<img src=x" not in html
    assert "<script>alert" not in html
    assert "&lt;" in html


# --- Paging ------------------------------------------------------------------------------------------------


def test_files_come_a_page_at_a_time_and_a_long_files_lines_a_window_at_a_time(
    operator_client, url, worktree, monkeypatch
):
    monkeypatch.setattr(review, "FILES_PER_PAGE", 2)
    monkeypatch.setattr(review, "LINES_PER_WINDOW", 3)
    Path(worktree.path, "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 9)))

    first = operator_client.get(url).text
    second = operator_client.get(f"{url}?page=2").text
    past = operator_client.get(f"{url}?page=9").text
    paths = lambda html: re.findall(r'data-testid="review-file" data-path="([^"]+)"', html)  # noqa: E731
    assert paths(first) == ["NOTES.md", "README.md"]
    assert paths(second) == ["app.py", "long.txt"]
    assert paths(past) == paths(second)  # past the last page: the last
    assert 'data-testid="review-page-next"' in first
    assert 'data-testid="review-page-next"' not in second

    # long.txt: a hunk line and 8 added lines; 3 shown, then "Show more" from 3.
    assert re.search(r'data-path="long.txt" data-kind="added" data-lines="3"', second)
    more = operator_client.get(f"{url}lines/", {"path": "long.txt", "from": 3}).text
    assert re.findall(r'data-line="(\d+)"', more) == ["3", "4", "5"]
    assert 'data-from="6"' in more
    last = operator_client.get(f"{url}lines/", {"path": "long.txt", "from": 6}).text
    assert re.findall(r'data-line="(\d+)"', last) == ["6", "7", "8"]
    assert "review-show-more" not in last


# --- Comments ----------------------------------------------------------------------------------------------


def test_a_comment_on_a_line_is_kept_listed_and_deletable(operator_client, url, worktree):
    response = operator_client.post(f"{url}comments/", {"path": "app.py", "line": 5, "text": "Return a tuple"})
    assert response.status_code == 200
    assert 'data-path="app.py" data-line="5" data-sent="false"' in response.text
    assert 'data-testid="review-send" data-count="1"' in response.text
    assert "Send 1 comment to the agent" in operator_client.get(url).text
    comment = ReviewComment.objects.get()
    assert (comment.task_id, comment.path, comment.line, comment.text) == (
        worktree.task_id,
        "app.py",
        5,
        "Return a tuple",
    )

    response = operator_client.post(f"{url}comments/{comment.pk}/delete/")
    assert 'data-count="0"' in response.text
    assert not ReviewComment.objects.exists()


def test_a_comment_without_text_or_line_is_refused_with_a_toast(operator_client, url, worktree):
    response = operator_client.post(f"{url}comments/", {"path": "app.py", "line": 0, "text": "x"})
    assert response["HX-Reswap"] == "none"
    assert 'data-testid="toast"' in response.text
    response = operator_client.post(f"{url}comments/", {"path": "app.py", "line": 3, "text": ""})
    assert response["HX-Reswap"] == "none"
    assert not ReviewComment.objects.exists()


def test_send_makes_one_prompt_of_the_comments_the_agent_gets_as_the_task_pages_prompt_and_marks_them_sent(
    operator_client, url, worktree, idle_session, runner
):
    for line, text in ((5, "Return a tuple"), (2, "Why 2?")):
        operator_client.post(f"{url}comments/", {"path": "app.py", "line": line, "text": text})
    operator_client.post(f"{url}comments/", {"path": "README.md", "line": 3, "text": "Typo"})

    response = operator_client.post(f"{url}send/")

    assert response.status_code == 200
    assert runner.calls == ["_deliver_prompt"]
    prompt = Message.objects.get(session=idle_session, author_type="user").content
    assert prompt == (
        f"Review comments on {worktree.branch}:\n- README.md:3 — Typo\n- app.py:2 — Why 2?\n- app.py:5 — Return a tuple"
    )
    assert idle_session.turns.count() == 2
    assert not ReviewComment.objects.filter(sent_at__isnull=True).exists()
    assert response.text.count('data-sent="true"') == 3
    assert 'data-testid="review-send" data-count="0"' in response.text


def test_send_while_the_agents_turn_is_open_says_why_and_keeps_the_comments(
    operator_client, url, worktree, make_session, make_execution, runner
):
    worktree.task.state = TaskState.IN_PROGRESS
    worktree.task.save()
    session = make_session(worktree.task, acp_session_id="acp-1", turn={"agent_turn_id": "turn-1"})
    make_execution(session)
    operator_client.post(f"{url}comments/", {"path": "app.py", "line": 5, "text": "Later"})

    response = operator_client.post(f"{url}send/")

    assert response["HX-Reswap"] == "none"
    assert 'data-reason="turn_open"' in response.text
    assert runner.calls == []
    assert ReviewComment.objects.get().sent_at is None
    assert not Message.objects.filter(author_type="user").exists()


def test_send_without_an_agent_session_says_so_and_keeps_the_comments(operator_client, url, worktree, runner):
    operator_client.post(f"{url}comments/", {"path": "app.py", "line": 5, "text": "Later"})
    response = operator_client.post(f"{url}send/")
    assert "No agent has worked on this task yet" in response.text
    assert ReviewComment.objects.get().sent_at is None
    assert not TaskSession.objects.exists()


# --- Push and pull request ---------------------------------------------------------------------------------


def test_push_branch_shows_the_commit_pushed_to_the_bare_remote(operator_client, url, worktree, repository, bare):
    repository.push_remote = str(bare)
    repository.save()
    assert 'data-testid="review-push"' in operator_client.get(url).text

    response = operator_client.post(f"{url}push/")

    commit = sh(bare, "rev-parse", f"refs/heads/{worktree.branch}")
    assert f'data-state="pushed" data-commit="{commit}"' in response.text
    assert f"at {commit[:12]} to {bare}" in response.text


def test_a_failed_push_shows_gits_reason(operator_client, url, worktree, repository, tmp_path):
    repository.push_remote = str(tmp_path / "gone.git")
    repository.save()
    response = operator_client.post(f"{url}push/")
    assert 'data-state="failed"' in response.text
    assert "could not be reached as a git remote" in response.text


def test_without_a_push_remote_the_page_says_where_one_is_set_and_offers_no_push(operator_client, url, worktree):
    html = operator_client.get(url).text
    assert 'data-testid="review-no-remote"' in html
    assert 'data-testid="review-push"' not in html
    assert "review-pull-request" not in html


def test_a_github_remote_named_in_the_repository_gets_an_open_pull_request_link_in_a_new_tab(
    operator_client, url, worktree, repo, repository
):
    sh(repo, "remote", "add", "origin", "git@github.com:acme/shop.git")
    repository.push_remote = "origin"
    repository.save()
    html = operator_client.get(url).text
    (link,) = tags_with(html, "review-pull-request")
    assert f'href="https://github.com/acme/shop/compare/main...{worktree.branch}?expand=1"' in link
    assert 'target="_blank"' in link
    assert 'rel="noopener noreferrer"' in link


def test_an_unknown_forge_gets_no_pull_request_link(operator_client, url, worktree, repository):
    repository.push_remote = "https://git.example.com/acme/shop.git"
    repository.save()
    assert "review-pull-request" not in operator_client.get(url).text


# --- The push settings on the repositories page ------------------------------------------------------------


def test_a_workspace_admin_sets_the_push_remote_and_a_token_that_is_never_shown_back(
    staff_client, workspace, repository
):
    settings_url = f"/settings/workspaces/{workspace.pk}/repositories/"
    action = f"{settings_url}{repository.pk}/push-remote/"

    response = staff_client.post(action, {"push_remote": "origin", "push_token": "tok-123456"})
    assert response.status_code == 302
    repository = Repository.objects.get(pk=repository.pk)
    assert (repository.push_remote, repository.push_token) == ("origin", "tok-123456")
    page = staff_client.get(settings_url).text
    assert "tok-123456" not in page
    assert 'data-testid="repository-token-kept"' in page

    staff_client.post(action, {"push_remote": "upstream", "push_token": ""})
    assert Repository.objects.get(pk=repository.pk).push_token == "tok-123456"  # an empty field keeps it
    staff_client.post(action, {"push_remote": "upstream", "forget_token": "on"})
    assert Repository.objects.get(pk=repository.pk).push_token == ""


@pytest.mark.parametrize(
    ("remote", "error"),
    [
        ("https://me:hunter2@github.com/acme/shop.git", "not in the URL"),
        ("--upload-pack=touch /tmp/x", "leading dash"),
        ("origin main", "without spaces"),
        ("/srv/other-workspace/shop", "Only a superuser"),
        ("file:///srv/other-workspace/shop", "Only a superuser"),
        ("ext::sh", "https, ssh or git URL"),
        ("ftp://example.com/shop.git", "https, ssh or git URL"),
    ],
)
def test_a_push_remote_with_a_password_or_that_git_would_read_as_an_option_is_refused(
    staff_client, workspace, repository, remote, error
):
    response = staff_client.post(
        f"/settings/workspaces/{workspace.pk}/repositories/{repository.pk}/push-remote/", {"push_remote": remote}
    )
    assert response.status_code == 400
    assert error in response.text
    assert "hunter2" not in response.text
    assert Repository.objects.get(pk=repository.pk).push_remote == ""


def test_a_member_who_is_no_admin_cannot_set_the_push_remote(operator_client, workspace, repository):
    response = operator_client.post(
        f"/settings/workspaces/{workspace.pk}/repositories/{repository.pk}/push-remote/", {"push_remote": "origin"}
    )
    assert response.status_code in (302, 403, 404)
    assert Repository.objects.get(pk=repository.pk).push_remote == ""


@pytest.mark.parametrize(
    "remote", ["origin", "https://github.com/acme/shop.git", "git@github.com:acme/shop.git", "ssh://git@host:2222/a/b"]
)
def test_a_remotes_name_or_a_network_url_is_taken_from_a_workspace_admin(staff_client, workspace, repository, remote):
    staff_client.post(
        f"/settings/workspaces/{workspace.pk}/repositories/{repository.pk}/push-remote/", {"push_remote": remote}
    )
    assert Repository.objects.get(pk=repository.pk).push_remote == remote


def test_a_superuser_may_push_to_a_path_on_the_machine(superuser_client, workspace, repository, bare):
    superuser_client.post(
        f"/settings/workspaces/{workspace.pk}/repositories/{repository.pk}/push-remote/", {"push_remote": str(bare)}
    )
    assert Repository.objects.get(pk=repository.pk).push_remote == str(bare)
