"""A task's description is Start agent's default prompt: the longest one allowed starts the agent as it is,
a longer one is refused where it is written, and an old one past the limit says why Start refuses it."""

from playwright.sync_api import expect

from kandev_web import limits
from testing_support.browser import login, open_task


def _describe(server, task_id: int, length: int) -> None:
    """Give a task a description of ``length`` characters, as an old row or a script could have."""
    update = f"Task.objects.filter(pk={task_id}).update(description='d' * {length})"
    server.manage("shell", "-c", f"from kandev_web.board.models import Task; {update}")


def test_the_longest_description_is_a_default_prompt_the_agent_gets(browser, server):
    ids = server.create_operator("longest", workspace="Longest", tasks=True)
    task_id = ids["task_ids"][0]
    _describe(server, task_id, limits.TASK_DESCRIPTION_CHARS)
    page = open_task(browser, server, "longest", task_id)
    prompt = page.get_by_test_id("session-start-prompt")
    assert len(prompt.input_value()) == limits.TASK_DESCRIPTION_CHARS
    page.get_by_test_id("session-start-submit").click()
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    expect(page.get_by_test_id("toast")).to_have_count(0)


def test_an_old_description_past_the_limit_says_why_start_refuses_it(browser, server):
    ids = server.create_operator("older", workspace="Older", tasks=True)
    task_id = ids["task_ids"][0]
    _describe(server, task_id, limits.TASK_DESCRIPTION_CHARS + 1)
    page = open_task(browser, server, "older", task_id)
    page.get_by_test_id("session-start-submit").click()
    refusal = f"The prompt has {limits.PROMPT_CHARS + 1} characters; an agent takes at most {limits.PROMPT_CHARS}."
    expect(page.get_by_test_id("toast")).to_contain_text(refusal)
    expect(page.locator("[data-testid=timeline-message][data-author=user]")).to_have_count(0)


def test_a_description_past_the_limit_is_refused_on_the_board(browser, server):
    ids = server.create_operator("writer", workspace="Writer")
    page = browser.new_context().new_page()
    login(page, server, "writer", f"/boards/{ids['board_id']}/")
    page.get_by_test_id("task-form-title").fill("Too long")
    # As a paste past the field's maxlength would arrive from a page that did not stop it.
    page.get_by_test_id("task-form-description").evaluate(
        "(el, n) => { el.removeAttribute('maxlength'); el.value = 'd'.repeat(n); }", limits.TASK_DESCRIPTION_CHARS + 1
    )
    page.get_by_test_id("task-create-submit").click()
    expect(page.get_by_test_id("task-create-error")).to_contain_text(
        f"Ensure this value has at most {limits.TASK_DESCRIPTION_CHARS} characters"
    )
    description = page.get_by_test_id("task-form-description")
    expect(description).to_have_attribute("maxlength", str(limits.TASK_DESCRIPTION_CHARS))
    expect(page.locator("[data-testid^=task-card-]")).to_have_count(0)
