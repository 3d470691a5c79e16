"""axe-core on every page an operator uses: no serious or critical violation, no duplicate landmark.

Every page is checked in both colour schemes: the browser prefers light, then dark
(static/js/scheme.js follows it live), so the dark palette's contrast is checked
on the same page, which is set up once.

axe-core comes from the ``axe-playwright-python`` test dependency, which bundles
its script; it runs inside the page as it is on screen.
"""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, fresh_task, login, start_scenario

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

AXE = Axe()
#: axe's experimental rule for a control whose name does not contain its visible text (the stepper, Back).
OPTIONS = {"resultTypes": ["violations"], "rules": {"label-content-name-mismatch": {"enabled": True}}}
#: Reported as "moderate" by axe, and fixed all the same.
ALSO_REFUSED = {"landmark-unique"}


def assert_accessible(page) -> None:
    """axe finds nothing refused on the page as it is, in the light scheme and then the dark one."""
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        expect(page.locator("html")).to_have_attribute("data-color-scheme", scheme)
        results = AXE.run(page, options=OPTIONS)
        refused = [
            violation["id"]
            for violation in results.response["violations"]
            if violation["impact"] in ("serious", "critical") or violation["id"] in ALSO_REFUSED
        ]
        assert refused == [], f"{scheme} scheme:\n{results.generate_report()}"


@pytest.fixture(scope="module")
def operator(server):
    return server.create_operator("seen", workspace="Seen", staff=True, tasks=True)


@pytest.fixture
def page(browser, server, operator):
    page = browser.new_context().new_page()
    login(page, server, "seen", f"/boards/{operator['board_id']}/")
    return page


def test_the_login_page(browser, server):
    page = browser.new_context().new_page()
    page.goto(f"{server.url}/login/")
    expect(page.get_by_test_id("login-form")).to_be_visible()
    assert_accessible(page)


def test_the_board_with_tasks_and_empty_columns(page):
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    expect(page.get_by_test_id("kanban-column-empty").filter(visible=True)).not_to_have_count(0)
    assert_accessible(page)


def test_the_board_searched_with_a_chip_on_and_its_keys_listed(page):
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    page.get_by_test_id("board-search").fill("release")
    page.get_by_test_id("board-search").press("Enter")
    page.locator("[data-testid=board-filter-state][data-value=done]").click()
    expect(page.locator("[data-testid=board-filter-state][data-value=done]")).to_have_attribute("data-on", "true")
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    page.locator("body").press("?")
    expect(page.get_by_test_id("board-keys")).to_be_visible()
    assert_accessible(page)


@pytest.mark.parametrize("path", ["/settings/feature-toggles/", "/settings/notifications/"])
def test_the_settings_pages(page, server, path):
    page.goto(server.url + path)
    expect(page.locator("[data-testid$=-settings]")).to_be_visible()
    assert_accessible(page)


def test_the_agent_profiles_page_with_a_preset_chosen_and_a_check_shown(page, server, operator):
    page.goto(f"{server.url}/settings/workspaces/{operator['workspace_id']}/agents/")
    page.get_by_test_id("profile-preset").select_option("gemini")
    expect(page.get_by_test_id("profile-form")).to_have_attribute("data-preset", "gemini")
    mock = page.get_by_test_id("profile-card").first
    mock.get_by_test_id("profile-check").click()
    # The check is over when its indicator is gone and its button is enabled again.
    expect(mock.get_by_test_id("profile-checking")).to_be_hidden(timeout=30_000)
    expect(mock.get_by_test_id("profile-check")).to_be_enabled()
    expect(mock.get_by_test_id("profile-check-result")).to_have_attribute("data-ok", "true")
    mock.get_by_test_id("profile-remove-open").click()
    expect(mock.get_by_test_id("profile-remove-consequence")).to_be_visible()
    assert_accessible(page)


def test_the_webhooks_page_with_a_secret_shown_and_a_failed_delivery_logged(browser, server):
    username = "seen-webhooks"
    ids = server.create_operator(username, workspace=f"{username}'s", staff=True)
    page = browser.new_context().new_page()
    login(page, server, username, f"/settings/workspaces/{ids['workspace_id']}/webhooks/")
    page.get_by_test_id("webhook-field-name").get_by_role("textbox").fill("Nowhere")
    # Nobody listens on port 9 (discard): the test event fails at once and waits for its retry.
    page.get_by_test_id("webhook-field-url").get_by_role("textbox").fill("http://127.0.0.1:9/hook")
    page.get_by_test_id("webhook-save").click()
    expect(page.get_by_test_id("webhook-secret")).to_be_visible()
    page.get_by_test_id("webhook-test").click()
    row = page.get_by_test_id("webhook-delivery")
    expect(row).to_have_attribute("data-attempts", "1", timeout=15_000)
    expect(row).to_have_attribute("data-state", "pending")
    expect(row.get_by_test_id("webhook-delivery-error")).not_to_be_empty()
    page.get_by_test_id("webhook-remove-open").click()
    assert_accessible(page)


def test_the_repositories_page_with_a_refused_path(page, server, operator):
    page.goto(f"{server.url}/settings/workspaces/{operator['workspace_id']}/repositories/")
    page.get_by_test_id("repository-name").fill("nowhere")
    page.get_by_test_id("repository-path").fill("/nonexistent/nowhere")
    page.get_by_test_id("repository-save").click()
    expect(page.locator("[data-testid=repository-field-error][data-field=path]")).to_be_visible()
    assert_accessible(page)


def test_the_task_page_before_any_agent(page, server, operator):
    page.goto(f"{server.url}/tasks/{operator['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    assert_accessible(page)


@pytest.mark.parametrize(
    "scenario",
    ["clarification", "elicit-two", "elicit-mcp-apikey", "clarification-multi", "permission-flow", "elicit-typed"],
    ids=["single-select", "multi-select", "free-text", "several-questions", "permission-card", "typed-form"],
)
def test_the_task_page_with_each_kind_of_question_open(browser, server, scenario):
    page, _ = fresh_task(browser, server, f"seen-{scenario}")
    start_scenario(page, scenario)
    # An agent's start is the slow part (a process, a session, a turn, the MCP call) on a busy machine.
    if scenario == "permission-flow":
        expect(page.get_by_test_id("permission-option").first).to_be_visible(timeout=30_000)
        assert_accessible(page)
        return
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_be_visible(timeout=30_000)
    if scenario == "elicit-two":
        page.get_by_test_id("clarification-next").click()
        expect(page.locator("[data-testid=clarification-question-card][data-kind=multi]")).to_be_visible()
    assert_accessible(page)
    if scenario == "elicit-typed":
        # Its required fields are empty: Submit marks them instead of asking to send nothing.
        page.get_by_test_id("clarification-submit").click()
        expect(page.get_by_test_id("clarification-problem").first).to_be_visible()
        assert_accessible(page)
    elif overlay.get_attribute("data-source") == "elicitation":
        page.get_by_test_id("clarification-submit").click()
        expect(page.get_by_test_id("clarification-confirm-empty")).to_be_visible()
        assert_accessible(page)
    page.get_by_test_id("clarification-collapse").click()
    expect(overlay).to_have_attribute("data-collapsed", "true")
    assert_accessible(page)


def test_the_task_page_with_markdown_code_a_diff_and_a_terminal_in_the_timeline(browser, server):
    """Scrolling blocks (code, diffs, terminal output) can be reached and scrolled from the keyboard."""
    page, _ = fresh_task(browser, server, "seen-rich")
    start_scenario(page, "rich-timeline")
    # An agent's start is the slow part (a process, a session, a turn) on a busy machine.
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false", timeout=30_000)
    expect(page.locator(".terminal").first).to_be_visible()
    assert_accessible(page)


def test_what_an_agent_spent_over_budget_on_the_task_in_the_inbox_and_on_the_usage_page(browser, server):
    page, _ = fresh_task(browser, server, "seen-spend")
    page.get_by_test_id("task-budget-input").fill("0.50")
    page.get_by_test_id("task-budget-save").click()
    expect(page.get_by_test_id("task-budget-input")).to_have_attribute("data-budget", "0.50")
    start_scenario(page, "spend")
    expect(page.get_by_test_id("session-usage")).to_have_attribute("data-cost", "0.75", timeout=AGENT_STARTS_MS)
    expect(page.get_by_test_id("task-over-budget")).to_be_visible()
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
    assert_accessible(page)

    page.goto(f"{server.url}/inbox/")
    expect(page.get_by_test_id("inbox-over-budget")).to_have_attribute("data-count", "1")
    assert_accessible(page)

    page.goto(f"{server.url}/usage/")
    expect(page.locator("[data-testid=usage-board]")).to_have_attribute("data-total", "0.75")
    assert_accessible(page)
