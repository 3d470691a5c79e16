"""Review and ship (issue 30): a task's whole branch against its base, comments on its lines sent to the agent as one
prompt, Push branch to a local bare repository, and the forge's "Open pull request" link.

The main spec goes the operator's way: a repository registered with a push remote, a task on it, the Mock agent
writing NOTES.md in the task's worktree, then the review page from the task page. The remote is named ``github``
in the repository: its URL is GitHub's (so the pull-request link is GitHub's compare page) and its push URL the
local bare repository (so the push really happens, and offline). The phone and axe specs make their task's
worktree directly with git, as an agent would have left it.
"""

import json
import re
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.browser import held_request, login, start_scenario
from testing_support.layout import PHONE, assert_no_horizontal_scroll, assert_tap_targets
from testing_support.processes import git

from .test_accessibility import assert_accessible

#: The server makes each task's worktree here, not in the tree's var/.
SERVER_ENV = {"KANDEV_WORKTREE_ROOT": tempfile.mkdtemp(prefix="kandev-e2e-review-worktrees-")}

GITHUB = "git@github.com:acme/shop.git"


@pytest.fixture
def bare(tmp_path) -> Path:
    path = tmp_path / "remote.git"
    path.mkdir()
    git(path, "init", "-q", "--bare")
    return path


def test_review_comment_send_push_and_the_pull_request_link(browser, server, repository, bare):
    git(repository, "remote", "add", "github", GITHUB)
    git(repository, "remote", "set-url", "--push", "github", str(bare))
    server.create_operator("reviewer", workspace="Review", staff=True)
    page = browser.new_context().new_page()
    login(page, server, "reviewer", "/")

    page.get_by_test_id("board-repositories").click()
    page.get_by_test_id("repository-name").fill("shop")
    page.get_by_test_id("repository-path").fill(str(repository))
    page.get_by_test_id("repository-save").click()
    expect(page.get_by_test_id("repository-list")).to_have_attribute("data-count", "1")
    push_form = page.get_by_test_id("repository-push-form")
    push_form.get_by_test_id("repository-push-remote").fill("github")
    push_form.get_by_test_id("repository-push-token").fill("tok-never-shown")
    push_form.get_by_test_id("repository-push-save").click()
    expect(page.get_by_test_id("repository-push-form")).to_have_attribute("data-push-remote", "github")
    expect(page.get_by_test_id("repository-push-form")).to_have_attribute("data-has-token", "true")
    assert "tok-never-shown" not in page.content()

    page.goto(f"{server.url}/")
    page.get_by_test_id("task-form-title").fill("Write the notes")
    page.get_by_test_id("task-form-repository").select_option(label="shop")
    page.get_by_test_id("task-create-submit").click()
    page.get_by_test_id("task-card-title").filter(has_text="Write the notes").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start_scenario(page, "edit-file")
    expect(page.get_by_test_id("worktree-changes")).to_have_count(1, timeout=20_000)
    expect(page.get_by_test_id("session-prompt-submit")).to_have_attribute("data-turn-open", "false", timeout=20_000)
    branch = page.get_by_test_id("task-branch").get_attribute("data-branch")
    task_url = page.url

    page.get_by_test_id("task-review-link").click()
    review = page.get_by_test_id("review-page")
    expect(review).to_have_attribute("data-branch", branch)
    expect(review).to_have_attribute("data-base", "main")
    notes = page.locator("[data-testid=review-file][data-path='NOTES.md']")
    expect(notes).to_have_attribute("data-kind", "added")
    expect(notes.get_by_test_id("review-lines")).to_be_hidden()  # collapsed until opened
    notes.get_by_test_id("review-file-summary").click()
    added = notes.locator("[data-testid=review-line][data-kind=add]")
    expect(added.get_by_test_id("review-line-text")).to_have_text(["# Notes", "", "Written by the mock agent."])

    assert added.evaluate_all("(els) => els.map((el) => el.dataset.line)") == ["1", "2", "3"]
    # A click on line 3 picks it; the comment is kept on the server and listed.
    notes.locator("[data-testid=review-line][data-line='3']").click()
    expect(notes.get_by_test_id("review-comment-line")).to_have_value("3")
    expect(notes.get_by_test_id("review-comment-text")).to_be_focused()
    notes.get_by_test_id("review-comment-text").fill("Say who wrote it.")
    notes.get_by_test_id("review-comment-add").click()
    comment = page.get_by_test_id("review-comment")
    expect(comment).to_have_count(1)
    expect(comment).to_have_attribute("data-sent", "false")
    expect(page.get_by_test_id("review-send")).to_have_attribute("data-count", "1")
    expect(notes.get_by_test_id("review-comment-text")).to_have_value("")
    page.reload()
    expect(page.get_by_test_id("review-comment")).to_have_count(1)

    page.get_by_test_id("review-send").click()
    expect(page.get_by_test_id("review-comment")).to_have_attribute("data-sent", "true")
    expect(page.get_by_test_id("review-comment-sent")).to_be_visible()
    expect(page.get_by_test_id("review-send")).to_have_attribute("data-count", "0")

    page.get_by_test_id("review-push").click()
    outcome = page.get_by_test_id("review-push-outcome")
    expect(outcome).to_have_attribute("data-state", "pushed")
    assert git(bare, "rev-parse", f"refs/heads/{branch}") == outcome.get_attribute("data-commit")

    link = page.get_by_test_id("review-pull-request")
    expect(link).to_have_attribute("href", f"https://github.com/acme/shop/compare/main...{branch}?expand=1")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")

    # The agent got the comments as one prompt: the task's timeline shows it as the operator's message.
    page.goto(task_url)
    prompt = page.locator("[data-testid=timeline-message][data-author=user]").last
    expect(prompt).to_contain_text(f"Review comments on {branch}:")
    expect(prompt).to_contain_text("- NOTES.md:3 — Say who wrote it.")


def _task_with_a_branch(server, tmp_path, username: str, *, staff: bool = False, files=None) -> dict:
    """A task whose worktree holds an agent's kind of change (a modified, an added and a long file): the ids.

    ``files`` (path to text) are added to the change.
    """
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True, staff=staff)
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("def main():\n    return 1\n")
    git(repo, "add", "app.py")
    git(repo, "-c", "user.email=d@example.com", "-c", "user.name=Dev", "commit", "-q", "-m", "Start")
    worktree = tmp_path / "worktree"
    git(repo, "worktree", "add", "-q", "-b", "kandev/task-review", str(worktree), "main")
    long_line = "x = '" + "a very long line of code " * 12 + "'\n"
    (worktree / "app.py").write_text("def main():\n    return 2\n\n" + long_line)
    (worktree / "notes.md").write_text("# Notes\n\n<b>not markup</b>\n")
    for path, text in (files or {}).items():
        (worktree / path).write_text(text)
    task_id = ids["task_ids"][0]
    made = {
        "workspace": ids["workspace_id"],
        "task": task_id,
        "repo": str(repo),
        "path": str(worktree),
        "base": git(repo, "rev-parse", "main"),
    }
    code = (
        "import json\n"
        "from kandev_web.repositories.models import Repository, Worktree\n"
        f"made = json.loads({json.dumps(json.dumps(made))})\n"
        "repository = Repository.objects.create(workspace_id=made['workspace'], name='shop', path=made['repo'],"
        " default_branch='main', push_remote='git@github.com:acme/shop.git')\n"
        "Worktree.objects.create(task_id=made['task'], repository=repository, branch='kandev/task-review',"
        " path=made['path'], base_commit=made['base'])\n"
    )
    server.manage("shell", "-v", "0", "-c", code)
    return ids


def test_a_large_branch_comes_a_page_of_files_and_a_window_of_lines_at_a_time_highlighted(browser, server, tmp_path):
    # 27 files (FILES_PER_PAGE is 20): app.py, long.py, module_00.py to module_23.py, notes.md; long.py has
    # 600 lines (LINES_PER_WINDOW is 400).
    files = {f"module_{n:02}.py": f"VALUE = {n}\n" for n in range(24)}
    files["long.py"] = "".join(f"def f{n}():\n    return {n}\n" for n in range(300))
    task_id = _task_with_a_branch(server, tmp_path, "pager", files=files)["task_ids"][0]
    page = browser.new_context().new_page()
    login(page, server, "pager", f"/tasks/{task_id}/review/")
    shown = page.get_by_test_id("review-file")
    expect(shown).to_have_count(20)
    expect(page.get_by_test_id("review-pager")).to_contain_text("Page 1 of 2")

    long = page.locator("[data-testid=review-file][data-path='long.py']")
    long.get_by_test_id("review-file-summary").click()
    first = long.locator("[data-testid=review-line][data-line='1']")
    expect(first.locator(".k")).to_have_text("def")  # highlighted as Python
    expect(long.locator("[data-testid=review-line][data-line='450']")).to_have_count(0)
    long.get_by_test_id("review-show-more").click()
    later = long.locator("[data-testid=review-line][data-line='450']")
    expect(later).to_be_visible()
    # A line that came with "Show more" takes a comment like the first ones.
    later.click()
    expect(long.get_by_test_id("review-comment-line")).to_have_value("450")
    long.get_by_test_id("review-comment-text").fill("Why so many?")
    long.get_by_test_id("review-comment-add").click()
    expect(page.locator("[data-testid=review-comment][data-line='450']")).to_have_count(1)

    page.get_by_test_id("review-page-next").click()
    expect(page.get_by_test_id("review-pager")).to_contain_text("Page 2 of 2")
    expect(shown).to_have_count(7)
    expect(shown.last).to_have_attribute("data-path", "notes.md")
    expect(page.get_by_test_id("review-page-next")).to_have_count(0)


def test_a_comment_form_takes_no_typing_while_its_comment_is_added(browser, server, tmp_path):
    """The form is emptied once its comment is added: what was typed meanwhile would go with it, so nothing can be."""
    task_id = _task_with_a_branch(server, tmp_path, "slow-reviewer")["task_ids"][0]
    page = browser.new_context().new_page()
    login(page, server, "slow-reviewer", f"/tasks/{task_id}/review/")
    app = page.locator("[data-testid=review-file][data-path='app.py']")
    app.get_by_test_id("review-file-summary").click()
    app.locator("[data-testid=review-line][data-line='2']").click()
    text = app.get_by_test_id("review-comment-text")
    text.fill("Why 2?")
    with held_request(page, f"**/tasks/{task_id}/review/comments/"):
        app.get_by_test_id("review-comment-add").click()
        expect(text).to_be_disabled()
        expect(app.get_by_test_id("review-comment-line")).to_be_disabled()
    expect(page.get_by_test_id("review-comment")).to_have_count(1)
    expect(text).to_be_enabled()
    expect(text).to_have_value("")


def test_the_repository_chip_narrows_the_board_to_its_tasks_and_a_new_one_joins_live(browser, server, tmp_path):
    ids = _task_with_a_branch(server, tmp_path, "repo-chip")
    on_shop = ids["task_ids"][0]
    board = browser.new_context().new_page()
    login(board, server, "repo-chip", f"/boards/{ids['board_id']}/")
    expect(board.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    cards = board.locator("#kanban .card")
    expect(cards).to_have_count(3)
    board.get_by_test_id("board-filter-repository").filter(has_text="shop").click()
    expect(board.get_by_test_id("board-filter-repository")).to_have_attribute("data-on", "true")
    assert re.search(r"repository=\d+", board.url)
    expect(board.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    expect(cards).to_have_count(1)
    expect(board.get_by_test_id(f"task-card-{on_shop}")).to_be_visible()

    # Made elsewhere: a task on no repository stays away, one on shop joins, in that order.
    other = browser.new_context().new_page()
    login(other, server, "repo-chip", f"/boards/{ids['board_id']}/")
    other.get_by_test_id("task-form-title").fill("Tidy the office")
    other.get_by_test_id("task-create-submit").click()
    expect(other.locator("#kanban .card")).to_have_count(4)
    other.get_by_test_id("task-form-title").fill("Another change to the shop")
    other.get_by_test_id("task-form-repository").select_option(label="shop")
    other.get_by_test_id("task-create-submit").click()
    expect(cards.filter(has_text="Another change to the shop")).to_have_count(1)
    expect(cards).to_have_count(2)
    expect(cards.filter(has_text="Tidy the office")).to_have_count(0)


def test_the_review_page_on_a_phone_fits_the_window_and_every_control_takes_a_finger(browser, server, tmp_path):
    task_id = _task_with_a_branch(server, tmp_path, "phone-reviewer")["task_ids"][0]
    page = browser.new_context(viewport=PHONE).new_page()
    login(page, server, "phone-reviewer", f"/tasks/{task_id}/review/")
    files = page.get_by_test_id("review-file")
    expect(files).to_have_count(2)
    for i in range(files.count()):
        files.nth(i).get_by_test_id("review-file-summary").click()
    long_line = page.locator("[data-testid=review-file][data-path='app.py'] [data-testid=review-line][data-line='4']")
    expect(long_line).to_be_visible()
    expect(page.get_by_test_id("review-pull-request")).to_be_visible()
    assert_no_horizontal_scroll(page)
    assert_tap_targets(page)


def test_the_review_page_is_accessible_in_both_colour_schemes(browser, server, tmp_path):
    username = "seen-review"
    task_id = _task_with_a_branch(server, tmp_path, username)["task_ids"][0]
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{task_id}/review/")
    app = page.locator("[data-testid=review-file][data-path='app.py']")
    app.get_by_test_id("review-file-summary").click()
    app.locator("[data-testid=review-line][data-line='2']").click()
    app.get_by_test_id("review-comment-text").fill("Why 2?")
    app.get_by_test_id("review-comment-add").click()
    expect(page.get_by_test_id("review-comment")).to_have_count(1)
    assert_accessible(page)


def test_the_push_settings_with_a_refused_remote_are_accessible(browser, server, tmp_path):
    username = "seen-push"
    ids = _task_with_a_branch(server, tmp_path, username, staff=True)
    page = browser.new_context().new_page()
    login(page, server, username, f"/settings/workspaces/{ids['workspace_id']}/repositories/")
    form = page.get_by_test_id("repository-push-form")
    expect(form).to_have_attribute("data-push-remote", GITHUB)
    form.get_by_test_id("repository-push-remote").fill("https://me:hunter2@github.com/acme/shop.git")
    form.get_by_test_id("repository-push-save").click()
    error = page.locator("[data-testid=repository-field-error][data-field=push_remote]")
    expect(error).to_have_text("Put the password or token in the push token field, not in the URL.")
    assert "hunter2" not in page.content()
    assert_accessible(page)
