"""Steps the browser specs share: logging in, opening a task with its socket up, starting the Mock agent.

Also the watch every browser context of the suite is under: pages that break
the Content-Security-Policy fail their test (``e2e/conftest.py``'s ``browser``).
"""

import asyncio
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from playwright.sync_api import expect

from .processes import PASSWORD, Server

#: How long an agent may take, on a busy machine, from Start to its first question on the page: agentctl
#: and the agent start, ACP's handshake and turn, the question asked (through MCP, for the ask path).
AGENT_STARTS_MS = 20_000

#: Reports each CSP violation of a page to the test, through a binding (outside the page's policy),
#: and keeps them in ``window.cspViolations`` for a test to wait on.
CSP_WATCH = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const text = `${event.effectiveDirective} refused ${event.blockedURI || "inline"}`
    + ` at ${event.sourceFile}:${event.lineNumber}` + (event.sample ? ` (${event.sample})` : "");
  window.cspViolations.push(text);
  window.__kandevCspViolation(text);
}, true);
"""

#: The pid of the agentctl process that runs a task's latest session, as the server's database knows it.
AGENTCTL_PID = """
from kandev_web.sessions.models import AgentExecution
print(AgentExecution.objects.filter(session__task_id={task_id}).latest("pk").pid)
"""


#: Every context asks for reduced motion, which the CSS honours: a running task's spinner, turning
#: on each open page for as long as its agent works, is CPU the suite's servers and agents need.
QUIET = {"reduced_motion": "reduce"}


class CspWatchedBrowser:
    """The session's browser, whose every new context reports the CSP violations of its pages.

    Both the ``securitypolicyviolation`` events and Chromium's "Refused to …"
    console errors count. Playwright's ``bypass_csp`` is refused: the suite
    runs under the policy the operator's browser gets.
    """

    def __init__(self, browser):
        self._browser = browser
        self.violations: list[str] = []
        self._contexts: list = []

    def __getattr__(self, name):
        return getattr(self._browser, name)

    def new_context(self, **kwargs):
        return self._watch(self._browser.new_context(**(QUIET | kwargs)), kwargs)

    def new_page(self, **kwargs):
        page = self._browser.new_page(**(QUIET | kwargs))
        self._watch(page.context, kwargs)
        return page

    def _watch(self, context, kwargs):
        assert not kwargs.get("bypass_csp"), "the browser suite runs under the Content-Security-Policy"
        context.expose_binding("__kandevCspViolation", lambda source, text: self.violations.append(text))
        context.add_init_script(CSP_WATCH)
        context.on("console", self._console)
        # Closed by its owner (pytest-playwright's ``context`` fixture, a test), it is not closed again.
        self._contexts.append(context)
        context.on("close", lambda closed: self._contexts.remove(closed) if closed in self._contexts else None)
        return context

    def close_contexts(self) -> None:
        """Close what the test opened: a page left open keeps reconnecting its sockets.

        The session's browser outlives each module's server, so a forgotten
        page would knock on a port the kernel later hands to another test's
        listener (a fake API, a denying proxy) and be counted there.
        """
        for context in list(self._contexts):
            context.close()

    def _console(self, message) -> None:
        if message.type == "error" and "Content Security Policy" in message.text:
            self.violations.append(message.text)


#: (server URL, server pid, username) -> the session cookie the login form gave them: a later
#: server on the same port, with another database, is another key.
_signed_in: dict[tuple[str, int, str], dict] = {}


def login(page, server: Server, username: str, path: str = "/") -> None:
    """``page`` on ``path`` as ``username``.

    Their first sign-in on ``server`` goes through the login form; later ones
    reuse the session it opened, as a second tab of theirs would, unless it is
    gone (they logged out): two page loads and a POST fewer, hundreds of
    times a run. ``e2e/test_access.py`` tests the form itself.
    """
    key = (server.url, server.process.pid, username)
    if cookie := _signed_in.get(key):
        page.context.add_cookies([cookie])
        page.goto(f"{server.url}{path}")
        if "/login/" not in page.url:
            return
    else:
        page.goto(f"{server.url}/login/?next={path}")
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(PASSWORD)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url(lambda url: "/login/" not in url)
    _signed_in[key] = next(c for c in page.context.cookies(server.url) if c["name"] == "sessionid")


def run_async(coroutine):
    """Run ``coroutine`` to its end on an event loop of its own thread.

    Playwright's sync API keeps the session's event loop in the test's thread,
    so ``asyncio.run`` there depends on which spec a worker ran before.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def open_task(browser, server: Server, username: str, task_id: int):
    """A new browser context logged in as ``username`` on a task page with its socket up."""
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    return page


def watched_page(browser, server: Server, username: str, path: str, *, live: str):
    """A new context logged in on ``path`` with its socket (test id ``live``) up.

    It counts htmx's errors (a swap without a target, a failed request) in
    ``window.htmxErrors``, for tests to check that live patches all landed.
    """
    context = browser.new_context()
    context.add_init_script("window.htmxErrors = 0; addEventListener('htmx:error', () => window.htmxErrors++);")
    page = context.new_page()
    login(page, server, username, path)
    expect(page.get_by_test_id(live)).to_have_attribute("data-live", "connected")
    return page


@contextmanager
def held_request(page, url: str) -> Iterator[None]:
    """Hold the page's request to ``url`` (a glob) until the block ends, for the block to see the page wait on it."""
    held = []
    page.route(url, lambda route: held.append(route))
    yield
    deadline = time.monotonic() + 15
    while not held:  # the route is called once Playwright delivers the request, between two of its calls
        assert time.monotonic() < deadline, f"no request to {url} left the page"
        page.wait_for_timeout(20)
    held[0].continue_()
    page.unroute(url)


def open_board(browser, server: Server, team: dict, username: str):
    """``team``'s board (ids as ``Server.create_operator`` gives them), watched live as ``username``."""
    return watched_page(browser, server, username, f"/boards/{team['board_id']}/", live="board-live")


def card_titled(page, title):
    return page.locator("li[data-task-id]").filter(has_text=title)


def fresh_task(browser, server: Server, username: str):
    """A task of its own, in a workspace of its own, so tests do not depend on each other."""
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    return open_task(browser, server, username, ids["task_ids"][0]), ids


def start_agent(page, prompt: str) -> None:
    """Start the task's agent (the Mock agent profile) with ``prompt``."""
    page.get_by_test_id("session-start-prompt").fill(prompt)
    page.get_by_test_id("session-start-submit").click()


def start_scenario(page, scenario: str) -> None:
    """Start the Mock agent on a scenario from ``kandev_web/mock_agent/scenarios/``."""
    start_agent(page, f"/e2e:{scenario}")


def agentctl_pid(server: Server, task_id) -> int:
    return int(server.manage("shell", "-v", "0", "-c", AGENTCTL_PID.format(task_id=task_id)).strip())


# --- The clarification overlay ----------------------------------------------------------------------


def agent_said(page, prefix: str) -> dict | list:
    """The JSON the mock agent reports after ``prefix``: what reached it over ACP."""
    message = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text=prefix)
    expect(message).to_have_count(1)
    # The report streams in; it is whole once its turn is over, and rendered once it settled.
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
    expect(message).to_have_attribute("data-streaming", "false")
    text = message.inner_text()
    offset = text.index(prefix) + len(prefix)
    value, _ = json.JSONDecoder().raw_decode(text[offset:].lstrip())
    return value


def expect_agentctl_gone(page) -> None:
    """The session failed because its agentctl ended, as every open tab shows."""
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
    expect(page.get_by_test_id("session-error")).to_contain_text("stopped unexpectedly")


def card(page, question_id):
    return page.locator(f"[data-testid=clarification-question-card][data-question-id='{question_id}']")


def option(scope, option_id):
    return scope.locator(f"[data-testid=clarification-option][data-option-id='{option_id}']")
