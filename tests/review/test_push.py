"""Push branch with real git: to a local bare repository as the remote, the token never in argv nor in the logs."""

import base64
import json
import logging
import subprocess
from pathlib import Path

import pytest
from django.db import connection

from kandev_web import git
from kandev_web.repositories import review
from kandev_web.repositories.models import Repository

from .conftest import commit_all, sh

TOKEN = "ghp_s3cretT0kenValue"


@pytest.fixture
def argvs(monkeypatch):
    """Every git command's argv and environment, recorded as they run."""
    seen = []
    real = subprocess.run

    def run(argv, *args, **kwargs):
        seen.append((list(argv), dict(kwargs.get("env") or {})))
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(git.subprocess, "run", run)
    return seen


def test_push_branch_puts_the_tasks_branch_on_the_remote_at_its_commit(worktree, bare, repository):
    repository.push_remote = str(bare)
    repository.save()

    pushed = review.push(worktree)

    assert pushed == sh(worktree.path, "rev-parse", "HEAD")
    assert sh(bare, "rev-parse", f"refs/heads/{worktree.branch}") == pushed


def test_a_remote_named_in_the_repository_is_pushed_to_by_name(worktree, bare, repo, repository):
    sh(repo, "remote", "add", "upstream", str(bare))
    repository.push_remote = "upstream"
    repository.save()
    assert review.push(worktree) == sh(bare, "rev-parse", f"refs/heads/{worktree.branch}")


def test_the_token_goes_in_gits_environment_never_in_argv_nor_in_a_log_line(worktree, bare, repository, argvs, caplog):
    repository.push_remote = str(bare)
    repository.push_token = TOKEN
    repository.save()
    repository = Repository.objects.get(pk=repository.pk)
    assert repository.push_token == TOKEN  # opened on read
    worktree.repository = repository
    caplog.set_level(logging.DEBUG)

    review.push(worktree)

    pushes = [(argv, env) for argv, env in argvs if "push" in argv]
    assert pushes, argvs
    for argv, _ in argvs:
        assert not any(TOKEN in part for part in argv)
    argv, env = pushes[0]
    header = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert env["GIT_CONFIG_KEY_0"] == "http.extraHeader"
    assert env["GIT_CONFIG_VALUE_0"] == f"Authorization: Basic {header}"
    assert TOKEN not in caplog.text
    assert header not in caplog.text
    # At rest it is sealed: the column holds no token in clear.
    with connection.cursor() as cursor:
        cursor.execute("SELECT push_token FROM agent_sessions_repository WHERE id = %s", [repository.pk])
        stored = cursor.fetchone()[0]
    assert TOKEN not in stored
    assert stored


def test_a_push_the_remote_refuses_says_why_and_the_remote_keeps_its_branch(worktree, bare, repository, tmp_path):
    repository.push_remote = str(bare)
    repository.save()
    review.push(worktree)
    # Someone else pushes to the branch meanwhile; the task's commit is no longer a fast-forward.
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", "-b", worktree.branch, str(bare), str(other)], check=True)
    (other / "x.txt").write_text("theirs\n")
    commit_all(other, "Theirs")
    sh(other, "push", "-q", "origin", worktree.branch)
    theirs = sh(bare, "rev-parse", f"refs/heads/{worktree.branch}")
    Path(worktree.path, "y.txt").write_text("ours\n")
    commit_all(Path(worktree.path), "Ours")

    with pytest.raises(review.ReviewError, match="refused"):
        review.push(worktree)
    assert sh(bare, "rev-parse", f"refs/heads/{worktree.branch}") == theirs


def test_a_remote_that_is_not_there_is_named_in_the_sentence(worktree, repository, tmp_path):
    repository.push_remote = str(tmp_path / "nowhere.git")
    repository.save()
    with pytest.raises(review.ReviewError, match="could not be reached as a git remote"):
        review.push(worktree)


def test_without_a_push_remote_nothing_is_pushed_and_the_operator_is_told_where_to_set_one(worktree):
    with pytest.raises(review.ReviewError, match="has no push remote"):
        review.push(worktree)


def test_an_http_remote_that_wants_credentials_is_an_authentication_failure():
    assert git._classify("fatal: could not read Username for 'https://github.com': terminal prompts disabled") is (
        git.Failure.AUTHENTICATION
    )
    assert git._classify("git@github.com: Permission denied (publickey).") is git.Failure.AUTHENTICATION
    assert git._classify(" ! [rejected]        b -> b (fetch first)\nerror: failed to push some refs to 'x'") is (
        git.Failure.REJECTED
    )


# --- On an executor host: the same steps through kandev-checkout ----------------------------------------------


def test_kandev_checkout_pushes_with_the_token_from_its_request_and_reads_a_page_of_the_branch(
    worktree, bare, tmp_path, argvs
):
    """What an executor host runs for the web app: the request on stdin, the token in it and never in argv."""
    from kandev_web.executor import checkout_cli

    request = {
        "op": "push",
        "args": {"repo": worktree.repository.path, "remote": str(bare), "branch": worktree.branch, "token": TOKEN},
    }
    answer = checkout_cli.answer(json.dumps(request), tmp_path / "root")
    assert answer == {"result": sh(bare, "rev-parse", f"refs/heads/{worktree.branch}")}
    assert not any(TOKEN in part for argv, _ in argvs for part in argv)

    page = {
        "op": "branch_changes",
        "args": {
            "repo": worktree.repository.path,
            "path": worktree.path,
            "base_commit": worktree.base_commit,
            "first": 1,
            "max_files": 1,
            "only": "",
            "max_file_bytes": 1000,
        },
    }
    answer = checkout_cli.answer(json.dumps(page), tmp_path / "root")
    assert answer["result"]["total"] == 3
    assert [entry[:2] for entry in answer["result"]["files"]] == [["README.md", "modified"]]

    refused = checkout_cli.answer(json.dumps({"op": "push", "args": {"repo": "relative", "remote": 1}}), tmp_path)
    assert refused["error"]["failure"] == "invalid"


def test_push_branch_on_an_executor_host_goes_over_ssh(workspace, worktree, bare, tmp_path):
    """Run by scripts/test, which starts an sshd: the repository on that host, pushed to by kandev-checkout there."""
    from kandev_web.agents.models import Executor
    from testing_support.executor import ssh_test_host_fields

    host = Executor.objects.create(name="gpu-1", **ssh_test_host_fields(), worktree_root=str(tmp_path / "executor"))
    Repository.objects.filter(pk=worktree.repository_id).update(executor=host, push_remote=str(bare))
    worktree.repository.refresh_from_db()

    pushed = review.push(worktree)
    page = review.review_page(worktree, 1)

    assert sh(bare, "rev-parse", f"refs/heads/{worktree.branch}") == pushed
    assert [file.path for file in page.files] == ["NOTES.md", "README.md", "app.py"]


def test_rotate_secrets_reseals_the_push_token_with_the_first_key(repository, settings, capsys):
    from cryptography.fernet import Fernet
    from django.core.management import call_command

    repository.push_token = TOKEN
    repository.save()
    new = Fernet.generate_key()
    settings.KANDEV_SECRETS_KEYS = [new, *settings.KANDEV_SECRETS_KEYS]

    call_command("rotate_secrets")

    assert "Re-encrypted 1 secret(s)" in capsys.readouterr().out
    settings.KANDEV_SECRETS_KEYS = [new]  # the old key dropped: the token still opens
    assert Repository.objects.get(pk=repository.pk).push_token == TOKEN


def test_an_https_remote_receives_the_token_as_basic_authorization_and_a_refusal_is_an_authentication_failure(
    worktree, repository
):
    """A real HTTP server as the remote: the header git sends is the token's, and its 401 reads as the credentials."""
    import http.server
    import threading

    seen = []

    class Remote(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Remote)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        repository.push_remote = f"http://127.0.0.1:{server.server_address[1]}/acme/shop.git"
        repository.push_token = f"robot:{TOKEN}"
        repository.save()
        worktree.repository = Repository.objects.get(pk=repository.pk)
        with pytest.raises(review.ReviewError, match="refused the credentials") as refused:
            review.push(worktree)
    finally:
        server.shutdown()
    assert seen[0] == "Basic " + base64.b64encode(f"robot:{TOKEN}".encode()).decode()
    assert TOKEN not in str(refused.value)
