"""The Content-Security-Policy as the operator's browser enforces it.

Every spec runs under it (e2e/conftest.py fails a test whose pages broke it);
these check the policy itself, the pages the rest of the suite does not open
(the admin), the watch (it does see a violation) and the one control that had
an inline handler.
"""

import pytest
from playwright.sync_api import expect

from testing_support.browser import login
from testing_support.deployment import CSP_POLICY


@pytest.fixture(scope="module")
def operator(server):
    return server.create_operator("strict", workspace="Strict", staff=True, tasks=True)


def directives(response) -> set[str]:
    return {part.strip() for part in response.headers["content-security-policy"].split(";")}


def test_every_page_is_served_under_the_strict_policy(browser, server, operator):
    page = browser.new_context().new_page()
    assert directives(page.goto(f"{server.url}/login/")) == CSP_POLICY
    login(page, server, "strict")
    for path in (
        f"/boards/{operator['board_id']}/",
        f"/tasks/{operator['task_ids'][0]}/",
        "/settings/notifications/",
        "/settings/feature-toggles/",
        f"/settings/workspaces/{operator['workspace_id']}/agents/",
        f"/settings/workspaces/{operator['workspace_id']}/repositories/",
        f"/settings/workspaces/{operator['workspace_id']}/webhooks/",
        "/admin/",
    ):
        assert directives(page.goto(server.url + path)) == CSP_POLICY, path


def test_the_live_sockets_connect_under_it(browser, server, operator):
    """connect-src 'self' covers the page's own ws: origin: the board and the task page go live."""
    page = browser.new_context().new_page()
    login(page, server, "strict", f"/boards/{operator['board_id']}/")
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    page.goto(f"{server.url}/tasks/{operator['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")


def test_htmx_neither_evals_nor_injects_a_style(browser, server, operator):
    page = browser.new_context().new_page()
    login(page, server, "strict", f"/boards/{operator['board_id']}/")
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    config = page.evaluate("({ ...htmx.config })")
    assert (config["allowEval"], config["allowScriptTags"], config["includeIndicatorStyles"]) == (False, False, False)
    expect(page.locator("style")).to_have_count(0)


@pytest.mark.parametrize(
    "path",
    [
        "/admin/",
        "/admin/board/task/",
        "/admin/board/task/add/",
        "/admin/board/board/add/",
        "/admin/agents/agentprofile/add/",
        "/admin/agents/executor/add/",
        "/admin/flags/flagoverride/add/",
        "/admin/auth/user/add/",
    ],
)
def test_the_admin_works_under_it(browser, server, operator, path):
    """Django's admin ships no inline script or style; its own JavaScript runs (the watch sees no refusal)."""
    page = browser.new_context().new_page()
    login(page, server, "strict", path)
    expect(page.locator("#content")).to_be_visible()
    # admin/js/theme.js, a script of the admin's own, runs: its toggle changes the theme.
    theme = page.locator("html")
    before = theme.get_attribute("data-theme")
    page.locator("button.theme-toggle").click()
    expect(theme).not_to_have_attribute("data-theme", before or "")


def test_the_watch_sees_a_violation(browser, server):
    """Markup that got past every other defence would not run, and the suite would say so."""
    page = browser.new_context().new_page()
    page.goto(f"{server.url}/login/")
    page.evaluate("""() => {
      const script = document.createElement("script");
      script.textContent = "window.ran = 'script'";
      document.body.append(script);
      const button = document.createElement("button");
      button.setAttribute("onclick", "window.ran = 'handler'");
      document.body.append(button);
      button.click();
    }""")
    page.wait_for_function("() => window.cspViolations.length === 2")
    assert page.evaluate("window.ran") is None
    assert sorted(violation.split()[0] for violation in browser.violations if "refused" in violation) == [
        "script-src-attr",
        "script-src-elem",
    ], browser.violations
    browser.violations.clear()


def test_desktop_notifications_are_asked_for_from_the_settings_button(browser, server, operator):
    context = browser.new_context(permissions=["notifications"])
    page = context.new_page()
    login(page, server, "strict", "/settings/notifications/")
    page.get_by_test_id("notification-permission").click()
    expect(page.get_by_test_id("notification-permission")).to_have_attribute("data-permission", "granted")
