"""A task on a registered repository, worked on in a git worktree of its own (issue #14).

An operator registers a repository on the workspace's Repositories page (a
path that is not one is refused, saying so), adds a task on it from the board, starts the Mock agent,
which writes a file in its working directory; the task page then shows the
repository, the task's branch, and the written file's diff against the base.
"""

import tempfile
from pathlib import Path

from playwright.sync_api import expect

from testing_support.browser import login, start_scenario
from testing_support.processes import git

#: The server makes each task's worktree here, not in the tree's var/.
SERVER_ENV = {"KANDEV_WORKTREE_ROOT": tempfile.mkdtemp(prefix="kandev-e2e-worktrees-")}


def test_the_agents_file_shows_as_a_diff_on_a_task_of_a_registered_repository(browser, server, repository, tmp_path):
    server.create_operator("repo-owner", workspace="Shop", staff=True)
    page = browser.new_context().new_page()
    login(page, server, "repo-owner", "/")

    page.get_by_test_id("board-repositories").click()
    expect(page.get_by_test_id("repository-list")).to_have_attribute("data-count", "0")
    page.get_by_test_id("repository-name").fill("shop")
    page.get_by_test_id("repository-path").fill(str(tmp_path))  # the folder around it is no repository
    page.get_by_test_id("repository-save").click()
    error = page.locator("[data-testid=repository-field-error][data-field=path]")
    expect(error).to_have_text(f"{tmp_path} is not a git repository.")
    page.get_by_test_id("repository-path").fill(str(repository))
    page.get_by_test_id("repository-save").click()
    expect(page.get_by_test_id("repository-list")).to_have_attribute("data-count", "1")
    expect(page.get_by_test_id("repository-card-path")).to_have_text(str(repository))

    page.goto(f"{server.url}/")
    page.get_by_test_id("task-form-title").fill("Write the notes")
    page.get_by_test_id("task-form-repository").select_option(label="shop")
    page.get_by_test_id("task-create-submit").click()
    page.get_by_test_id("task-card-title").filter(has_text="Write the notes").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    expect(page.get_by_test_id("task-repository")).to_have_text("shop")
    expect(page.get_by_test_id("task-branch")).to_have_attribute("data-base", "main")

    start_scenario(page, "edit-file")

    changes = page.get_by_test_id("worktree-changes")
    expect(changes).to_have_count(1, timeout=20_000)
    task_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    branch = f"kandev/task-{task_id}-write-the-notes"
    expect(changes).to_have_attribute("data-branch", branch)
    expect(changes.get_by_test_id("changed-file")).to_have_text(["NOTES.md"])
    diff = changes.get_by_test_id("worktree-diff")
    expect(diff).to_have_attribute("data-path", "NOTES.md")
    expect(diff.get_by_test_id("diff-old-path")).to_have_text("/dev/null")
    expect(diff.locator("[data-testid=diff-line][data-kind=add]")).to_have_text(
        ["+# Notes", "+", "+Written by the mock agent."]
    )
    expect(page.get_by_test_id("task-branch")).to_have_attribute("data-branch", branch)
    # The agent wrote in the task's worktree, on its branch; the repository's own checkout is untouched.
    assert not (repository / "NOTES.md").exists()
    assert branch in git(repository, "branch", "--list", "kandev/*")

    # The agent's work committed on the branch only: deleting the task with its worktree asks first.
    worktree = Path(SERVER_ENV["KANDEV_WORKTREE_ROOT"]) / f"task-{task_id}"
    git(worktree, "add", "NOTES.md")
    git(worktree, "-c", "user.email=a@example.com", "-c", "user.name=Agent", "commit", "-q", "-m", "Notes")
    page.on("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("task-delete-remove-worktree").check()
    page.get_by_test_id("task-delete-submit").click()
    expect(page.get_by_test_id("toast-body")).to_have_text(
        f"The branch {branch} holds 1 commit(s) that exist nowhere else; "
        "confirm that they may be discarded to remove it."
    )
    assert worktree.is_dir()
    expect(page.get_by_test_id("task-details")).not_to_have_attribute("data-deleted", "true")

    page.get_by_test_id("task-delete-remove-worktree").check()
    page.get_by_test_id("task-delete-discard-commits").check()
    page.get_by_test_id("task-delete-submit").click()
    expect(page.get_by_test_id("task-deleted-notice")).to_be_visible()
    assert not worktree.exists()
    assert git(repository, "branch", "--list", "kandev/*") == ""
