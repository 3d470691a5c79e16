"""The agent's modes, slash commands and on/off options in the composer (docs/user-guide.md#the-composer).

The mock agent runs with ``--session-settings``: modes ask/code/plan, three
slash commands, and the boolean option "Verbose answers", offered because the
flag advertises ``session.configOptions.boolean``. Its ``session-settings``
scenario says which mode and options reached it.
"""

from playwright.sync_api import expect

from e2e.test_accessibility import assert_accessible
from testing_support.browser import AGENT_STARTS_MS, login, open_task
from testing_support.browser import start_scenario as start
from testing_support.layout import PHONE, assert_no_horizontal_scroll, assert_tap_targets, assert_within_window

SERVER_ENV = {"KANDEV_FEATURES_ACP_BOOLEAN_CONFIG_OPTIONS": "true"}

WITH_SESSION_SETTINGS = (
    "from kandev_web.agents.models import AgentProfile\n"
    "profile = AgentProfile.objects.get(workspace_id={workspace_id})\n"
    "profile.command = [*profile.command, '--session-settings']\n"
    "profile.save()\n"
)


def _task(browser, server, username: str):
    """A task page whose workspace's mock agent offers modes, commands and an option; and the task's id."""
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    server.manage("shell", "-v", "0", "-c", WITH_SESSION_SETTINGS.format(workspace_id=ids["workspace_id"]))
    return open_task(browser, server, username, ids["task_ids"][0]), ids["task_ids"][0]


def _turn_over(page) -> None:
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")


def _send(page, text: str) -> None:
    _turn_over(page)
    page.get_by_test_id("session-prompt-input").fill(text)
    page.get_by_test_id("session-prompt-submit").click()


def _agent_said(page, text: str) -> None:
    said = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text=text)
    # Often the first thing waited for after an agent starts, the slow part on a loaded machine.
    expect(said).to_have_count(1, timeout=AGENT_STARTS_MS)


def _simple_message_done(page) -> None:
    """``simple-message``'s reply is in and its turn over: nothing re-renders the composer under a measurement.

    The turn's flag alone is "false" before the agent has even started.
    """
    _agent_said(page, "This is a simple message from the mock agent.")
    _turn_over(page)


def test_switching_the_mode_reaches_the_agent_and_every_open_page(browser, server):
    page, task_id = _task(browser, server, "modes")
    start(page, "session-settings")
    _agent_said(page, "Mode: code. Options: verbose off.")
    mode = page.get_by_test_id("session-mode")
    expect(mode).to_have_attribute("data-current", "code")
    expect(mode).to_have_value("code")
    expect(page.get_by_test_id("session-mode-option")).to_have_text(["Ask", "Code", "Plan"])
    expect(page.get_by_test_id("session-mode-description")).to_have_text("Write and change code")
    other = open_task(browser, server, "modes", task_id)
    expect(other.get_by_test_id("session-mode")).to_have_attribute("data-current", "code")

    _turn_over(page)
    mode.select_option("plan")
    # The agent's current_mode_update, shown live here and on the other page.
    expect(mode).to_have_attribute("data-current", "plan")
    expect(page.get_by_test_id("session-mode-description")).to_have_text("Plan the work before changing anything")
    expect(other.get_by_test_id("session-mode")).to_have_attribute("data-current", "plan")
    expect(other.get_by_test_id("session-mode")).to_have_value("plan")

    _send(page, "/e2e:session-settings")
    _agent_said(page, "Mode: plan. Options: verbose off.")


def test_a_slash_completes_the_agents_commands_by_keyboard_and_by_click(browser, server):
    page, _ = _task(browser, server, "commands")
    start(page, "simple-message")
    _simple_message_done(page)
    prompt = page.get_by_test_id("session-prompt-input")
    commands = page.get_by_test_id("command-list")
    expect(commands).to_be_hidden()
    expect(page.get_by_test_id("prompt-commands-hint")).to_have_attribute("data-command-count", "3")

    prompt.click()
    prompt.press_sequentially("/")
    expect(commands).to_be_visible()
    expect(commands).to_have_attribute("data-open", "true")
    options = commands.get_by_test_id("command-option")
    expect(options.get_by_test_id("command-name")).to_have_text(["/review", "/test", "/summarize"])
    expect(options.get_by_test_id("command-description")).to_have_text(
        ["Review the changes so far", "Run the tests", "Summarize the conversation"]
    )
    expect(options.nth(1).get_by_test_id("command-hint")).to_have_text("which tests")
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    prompt.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(prompt).to_have_attribute("aria-activedescendant", "command-option-2")
    prompt.press("Enter")
    expect(prompt).to_have_value("/test ")
    expect(commands).to_be_hidden()

    # Typing narrows the list; Escape closes it and leaves the text.
    prompt.fill("")
    prompt.press_sequentially("/su")
    expect(options.filter(visible=True)).to_have_count(1)
    expect(options.filter(visible=True)).to_have_attribute("data-command", "summarize")
    prompt.press("Escape")
    expect(commands).to_be_hidden()
    expect(prompt).to_have_value("/su")
    # Nothing matches: no list.
    prompt.press_sequentially("x")
    expect(commands).to_be_hidden()

    prompt.fill("")
    prompt.press_sequentially("/re")
    page.locator("[data-testid=command-option][data-command=review]").click()
    expect(prompt).to_have_value("/review ")
    expect(prompt).to_be_focused()
    page.get_by_test_id("session-prompt-submit").click()
    _agent_said(page, "Running the /review command.")


def test_toggling_an_option_reaches_the_agent_and_shows_its_answer(browser, server):
    page, _ = _task(browser, server, "options")
    start(page, "session-settings")
    _agent_said(page, "Mode: code. Options: verbose off.")
    option = page.locator("[data-testid=session-option][data-option-id=verbose]")
    expect(option).to_contain_text("Verbose answers")
    expect(option.get_by_test_id("session-option-description")).to_have_text("Explain every step")
    expect(option).to_have_attribute("data-value", "false")
    toggle = option.get_by_test_id("session-option-toggle")
    expect(toggle).not_to_be_checked()

    _turn_over(page)
    toggle.check()
    # The agent's answer and its config_option_update, re-rendered live.
    expect(page.locator("[data-testid=session-option][data-option-id=verbose]")).to_have_attribute("data-value", "true")
    expect(page.get_by_test_id("session-option-toggle")).to_be_checked()

    _send(page, "/e2e:session-settings")
    _agent_said(page, "Mode: code. Options: verbose on.")


def test_the_composer_with_modes_options_and_the_command_list_open_is_accessible(browser, server):
    username = "axe"
    _, task_id = _task(browser, server, username)
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{task_id}/")
    start(page, "simple-message")
    _simple_message_done(page)
    expect(page.get_by_test_id("session-option")).to_have_count(1)
    page.get_by_test_id("session-prompt-input").press_sequentially("/")
    expect(page.get_by_test_id("command-list")).to_be_visible()
    assert_accessible(page)


def test_on_a_phone_the_composers_controls_fit_and_take_a_finger(browser, server):
    _, task_id = _task(browser, server, "phone")
    page = browser.new_context(viewport=PHONE, locale="de-DE").new_page()  # German labels are longer
    login(page, server, "phone", f"/tasks/{task_id}/")
    start(page, "simple-message")
    _simple_message_done(page)
    expect(page.get_by_test_id("session-option")).to_have_count(1)
    page.get_by_test_id("session-prompt-input").press_sequentially("/")
    commands = page.get_by_test_id("command-list")
    expect(commands).to_be_visible()
    for each in [page.get_by_test_id("session-mode"), page.get_by_test_id("session-option"), commands]:
        assert_within_window(page, each)
    assert_no_horizontal_scroll(page)
    assert_tap_targets(page)
