"""The demo ``scripts/run`` makes, in a browser: a question answered without touching a setting (issue #14).

The server starts as ``scripts/run`` starts it (no flag in its environment,
the e2e profile, which like every profile has ``features.acpElicitation``
off), on a fresh database the demo command then fills, as ``scripts/run``
runs it: only the operator's password and the repository's place differ, so
that the spec logs in and writes nothing in the tree's ``var/``.
"""

import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.browser import agent_said, login, option
from testing_support.layout import DESKTOP, PHONE
from testing_support.processes import PASSWORD

#: The server makes each task's worktree here, not in the tree's var/.
SERVER_ENV = {"KANDEV_WORKTREE_ROOT": tempfile.mkdtemp(prefix="kandev-e2e-demo-worktrees-")}
REPOSITORY = Path(tempfile.mkdtemp(prefix="kandev-e2e-demo-")) / "demo-repository"
QUESTION_TASK = "See an agent ask you a question"


def git(cwd, *args):
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def demo(server):
    server.manage("demo", "--password", PASSWORD, "--repository", str(REPOSITORY))
    return server


def card_titled(page, title):
    return page.locator("[data-testid^=task-card-][data-task-id]").filter(
        has=page.get_by_test_id("task-card-title").filter(has_text=title)
    )


def open_demo_task(browser, demo, *, first: bool = False):
    """The demo's question task; ``first``: check it is the board's first card, as a fresh demo has it."""
    page = browser.new_context().new_page()
    login(page, demo, "demo", "/")
    if first:
        expect(page.locator("[data-testid^=task-card-][data-task-id]").first).to_contain_text(QUESTION_TASK)
    card_titled(page, QUESTION_TASK).get_by_test_id("task-card-title").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    return page


def test_a_fresh_demo_asks_a_structured_question_answered_in_the_overlay(browser, demo):
    page = open_demo_task(browser, demo, first=True)
    expect(page.get_by_test_id("task-repository")).to_have_text("Demo repository")
    expect(page.get_by_test_id("session-start-profile").locator("option:checked")).to_have_text("Mock agent")
    scenario = page.get_by_test_id("session-start-scenario")
    expect(scenario).to_be_visible()

    scenario.select_option(label="Ask a structured question")
    page.get_by_test_id("session-start-submit").click()

    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "elicitation")  # the flag's stored override is on
    expect(page.get_by_test_id("message-scenario")).to_have_text("Scenario: Ask a structured question")
    option(page, "Blue").click()
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
    expect(page.get_by_test_id("task-branch")).to_have_attribute(
        "data-branch", re.compile(r"^kandev/task-\d+-see-an-agent-ask-you-a-question$")
    )


def test_the_scenario_picker_follows_the_agent_and_starting_a_scenario_runs_it(browser, demo):
    demo.manage(
        "shell",
        "-c",
        "from kandev_web.board.models import Workspace\n"
        "from kandev_web.agents.models import AgentProfile\n"
        "AgentProfile.objects.get_or_create(workspace=Workspace.objects.get(name='Demo workspace'),"
        " name='Claude', defaults={'agent_id': 'claude-acp', 'command': ['false']})",
    )
    page = browser.new_context().new_page()
    login(page, demo, "demo", "/")
    card_titled(page, "Fix flaky login redirect").get_by_test_id("task-card-title").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    profile, scenario = page.get_by_test_id("session-start-profile"), page.get_by_test_id("session-start-scenario")

    profile.select_option(label="Claude")
    expect(scenario).to_be_hidden()
    expect(page.get_by_test_id("session-start-prompt")).to_be_enabled()
    profile.select_option(label="Mock agent")
    expect(scenario).to_be_visible()
    labels = scenario.locator("option").all_inner_texts()
    assert labels[1:3] == ["Ask a structured question", "Ask several questions"]
    assert {"Request a permission", "Edit a file"} <= set(labels)
    scenario.select_option(label="Request a permission")
    expect(page.get_by_test_id("session-start-prompt")).to_be_disabled()  # the scenario is the prompt
    page.get_by_test_id("session-start-submit").click()

    card = page.get_by_test_id("permission-card")
    expect(card).to_have_attribute("data-status", "pending")
    expect(page.get_by_test_id("message-scenario")).to_have_text("Scenario: Request a permission")


def test_the_board_cards_delete_removes_the_worktree_and_branch_when_asked_and_confirmed(browser, demo):
    page = browser.new_context().new_page()
    login(page, demo, "demo", "/")
    page.get_by_test_id("task-form-title").fill("Tidy the notes")
    page.get_by_test_id("task-form-repository").select_option(label="Demo repository")
    page.get_by_test_id("task-create-submit").click()
    card_titled(page, "Tidy the notes").get_by_test_id("task-card-title").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    task_id = page.get_by_test_id("task-live").get_attribute("data-task-id")
    page.get_by_test_id("session-start-profile").select_option(label="Mock agent")
    page.get_by_test_id("session-start-scenario").select_option(label="Edit a file")
    page.get_by_test_id("session-start-submit").click()
    expect(page.get_by_test_id("worktree-changes")).to_have_count(1, timeout=20_000)
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
    branch = page.get_by_test_id("task-branch").get_attribute("data-branch")
    worktree = Path(SERVER_ENV["KANDEV_WORKTREE_ROOT"]) / f"task-{task_id}"
    git(worktree, "add", "NOTES.md")
    git(worktree, "-c", "user.email=a@example.com", "-c", "user.name=Agent", "commit", "-q", "-m", "Notes")

    page.get_by_test_id("task-back-to-board").click()
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    card = page.get_by_test_id(f"task-card-{task_id}")
    page.on("dialog", lambda dialog: dialog.accept())
    card.get_by_test_id("task-delete").click()
    remove = card.get_by_test_id("task-delete-remove-worktree")
    expect(remove.locator("xpath=..")).to_contain_text(f"Also remove its worktree and the branch {branch}")
    remove.check()
    # Another operator moves the card meanwhile: the open form, box ticked, stays as it was.
    other = browser.new_context().new_page()
    login(other, demo, "demo", "/")
    expect(other.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    step = card.get_attribute("data-step-id")
    other.get_by_test_id(f"task-card-{task_id}").get_by_test_id("task-move-left").click()
    expect(card).not_to_have_attribute("data-step-id", step)
    expect(card.get_by_test_id("task-delete-menu")).to_have_attribute("open", "")
    expect(remove).to_be_checked()
    card.get_by_test_id("task-delete-submit").click()
    expect(page.get_by_test_id("toast-body")).to_have_text(
        f"The branch {branch} holds 1 commit(s) that exist nowhere else; "
        "confirm that they may be discarded to remove it."
    )
    expect(card).to_be_visible()
    assert worktree.is_dir()

    card.get_by_test_id("task-delete-discard-commits").check()
    card.get_by_test_id("task-delete-submit").click()
    expect(card).to_have_count(0)
    assert not worktree.exists()
    assert branch not in git(REPOSITORY, "branch", "--list", "kandev/*")


#: Where the task details' checkbox ``testId`` sits against the first line of its label's text (the
#: label holds both); null until it is shown.
#: Found and measured in one go: a live swap of the task's details, between a locator finding the box
#: and measuring it, would leave a box out of the page, with no layout to measure.
CHECKBOX_AND_LABEL = """testId => {
  const box = document.querySelector(`[data-testid=task-details] [data-testid=${testId}]`);
  if (!box || !box.checkVisibility()) return null;
  const label = box.closest("label");
  const range = document.createRange();
  range.setStartAfter(box);
  range.setEnd(label, label.childNodes.length);
  const line = range.getClientRects()[0];
  if (!line) return null;
  const b = box.getBoundingClientRect();
  return {boxLeft: b.left, boxRight: b.right, boxMiddle: b.top + b.height / 2,
          labelLeft: label.getBoundingClientRect().left,
          textLeft: line.left, textTop: line.top, textBottom: line.bottom};
}"""

#: Whether each localised time reads as the browser's own format says it should (all of them are from today).
TIMES_IN_ONE_FORMAT = """() => Array.from(document.querySelectorAll("time"), t => ({
  localised: t.dataset.localised === "true",
  text: t.textContent,
  expected: new Intl.DateTimeFormat(undefined, {hour: "numeric", minute: "2-digit"}).format(new Date(t.dateTime)),
}))"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_scenario_from_the_form_is_named_its_times_share_one_format_and_delete_boxes_sit_by_their_labels(
    browser, demo, viewport
):
    page = browser.new_context(viewport=viewport).new_page()
    login(page, demo, "demo", "/")
    title = f"Look around ({viewport['width']})"
    page.get_by_test_id("task-form-title").fill(title)
    page.get_by_test_id("task-form-repository").select_option(label="Demo repository")
    page.get_by_test_id("task-create-submit").click()
    card_titled(page, title).get_by_test_id("task-card-title").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    page.get_by_test_id("session-start-profile").select_option(label="Mock agent")
    page.get_by_test_id("session-start-scenario").select_option(label="Fix a bug: a plan, a diff and a test run")
    page.get_by_test_id("session-start-submit").click()
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false", timeout=30_000)
    expect(page.get_by_test_id("tool-terminal")).to_have_attribute("data-exit-code", "0")

    # The operator's message names the scenario; the /e2e: prompt stays between the server and the mock agent.
    expect(page.get_by_test_id("message-scenario")).to_have_text("Scenario: Fix a bug: a plan, a diff and a test run")
    expect(page.get_by_test_id("timeline")).not_to_contain_text("/e2e:")
    expect(page.get_by_test_id("timeline")).not_to_contain_text("onerror")

    # One format on one page: the sessions list's time too, as every message's.
    expect(page.get_by_test_id("session-time")).to_have_attribute("data-localised", "true")
    times = page.evaluate(TIMES_IN_ONE_FORMAT)
    assert len(times) >= 3
    assert [t for t in times if not t["localised"] or t["text"] != t["expected"]] == []

    for test_id in ("task-delete-remove-worktree", "task-delete-discard-commits"):
        at = page.wait_for_function(CHECKBOX_AND_LABEL, arg=test_id).json_value()
        assert at["boxLeft"] - at["labelLeft"] <= 1, at  # left aligned, not centred
        assert at["boxRight"] <= at["textLeft"], at  # beside its text, on its left
        assert at["textTop"] <= at["boxMiddle"] <= at["textBottom"], at  # on the same row as its first line
