"""The timeline an operator reads (issue #12, item 8).

The agent's Markdown is formatted and its markup stays text; a tool call's
diff reads as a diff and its terminal as a terminal, hostile content inert in
both; each message has its time and each agent session its divider; the
timeline follows a stream until the operator scrolls up; a tool call whose
permission was answered moves on; a question is said once, in the overlay
while it is open and in the timeline once answered; the page has a favicon;
and nothing of it makes a console error.
"""

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from testing_support.browser import login, start_scenario

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

#: Anything the hostile content would have created, had it been parsed as HTML.
INJECTED = "img, svg, iframe, script:not([src]), [onerror], [onload], a[href^='javascript:' i]"


class Watched:
    """A task page of its own, its console errors, script errors and dialogs collected from the first request."""

    def __init__(self, browser, server, username):
        ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_context().new_page()
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        login(self.page, server, username, f"/tasks/{ids['task_ids'][0]}/")
        expect(self.page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")

    def assert_quiet(self):
        assert self.errors == [], f"console errors: {self.errors}"
        assert self.dialogs == [], f"a dialog opened: {self.dialogs}"


@pytest.fixture
def watched(browser, server, request):
    return Watched(browser, server, request.node.name.removeprefix("test_")[:24])


def turn_over(page):
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false", timeout=20_000)


def agent_message(page, marker):
    message = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text=marker)
    expect(message).to_have_count(1, timeout=20_000)
    return message


def check_rich_timeline(page):
    timeline = page.get_by_test_id("timeline")
    body = agent_message(page, "END-OF-MARKDOWN").get_by_test_id("message-body")
    expect(body.locator("h1")).to_have_text("Release notes")
    expect(body.locator("ol > li")).to_have_text(["Read settings.py", "Turned debug off"])
    expect(body.locator("ol code")).to_have_text("settings.py")
    expect(body.locator("ol strong")).to_have_text("debug")
    fence = body.locator("pre.highlight")
    expect(fence).to_have_text("def release(version):\n    return \"<script>alert('md-fence')</script>\"\n")
    expect(fence.locator("span.k").first).to_have_text("def")
    expect(fence.locator("span.nf")).to_have_text("release")
    table = body.locator("table")
    expect(table.locator("th")).to_have_text(["Check", "Result"])
    expect(table.locator("tbody tr").first.locator("td")).to_have_text(["tests", "3 passed"])
    expect(table.locator("tbody tr").last.locator("td")).to_have_text(
        ["<img src=x onerror=alert('md-cell')>", "[cell](javascript:alert('md-cell-link'))"]
    )
    # The web links are links that leak nothing (an image is one too, never fetched); the rest is text.
    links = body.locator("a")
    expect(links).to_have_text(["pixel", "docs"])
    for index, href in enumerate(["https://tracker.invalid/p.gif", "https://example.com/docs"]):
        expect(links.nth(index)).to_have_attribute("href", href)
        expect(links.nth(index)).to_have_attribute("rel", "noopener noreferrer nofollow")
    expect(body).to_contain_text("<script>alert('md-script')</script><img src=x onerror=alert('md-img')>")
    expect(body).to_contain_text("<!-- md-comment --> <svg onload=alert('md-nested')>")
    expect(body).to_contain_text("[click me](javascript:alert('md-link')) !pixel")
    expect(body.locator("strong").last).to_have_text("<svg onload=alert('md-nested')>")

    edit = timeline.locator("[data-testid=tool-call][data-tool-call-id^=diff-]")
    expect(edit).to_have_attribute("data-status", "completed")
    diff = edit.get_by_test_id("tool-diff")
    expect(diff.get_by_test_id("diff-old-path")).to_have_text("a/src/<img src=x onerror=alert('diff-path')>.py")
    expect(diff.get_by_test_id("diff-new-path")).to_have_text("b/src/<img src=x onerror=alert('diff-path')>.py")
    lines = diff.get_by_test_id("diff-line")
    expect(lines).to_have_text(
        [
            "@@ -1,3 +1,3 @@",
            " NAME = 'kandev'",
            "-DEBUG = True",
            "-<script>alert('diff-old')</script>",
            "+DEBUG = False",
            "+<img src=x onerror=alert('diff-new')>",
        ]
    )
    expect(diff.locator(".diff-del")).to_have_count(2)
    expect(diff.locator(".diff-add")).to_have_count(2)
    expect(diff.locator(".diff-del").first).to_have_css("background-color", "rgb(255, 235, 233)")
    expect(diff.locator(".diff-add").first).to_have_css("background-color", "rgb(230, 255, 236)")

    command = timeline.locator("[data-testid=tool-call][data-tool-call-id^=term-]")
    expect(command).to_have_attribute("data-status", "completed")
    terminal = command.get_by_test_id("tool-terminal")
    expect(terminal).to_have_attribute("data-exited", "true")
    expect(terminal).to_have_attribute("data-exit-code", "0")
    expect(terminal.get_by_test_id("terminal-command")).to_have_text(
        "$ pytest -q <script>alert('term-command')</script>"
    )
    # All of the output so far replaced what came before; the colour escapes are gone.
    expect(terminal.get_by_test_id("terminal-output")).to_have_text(
        "3 passed in 0.12s\n<img src=x onerror=alert('term-output')>\n"
    )
    expect(terminal.get_by_test_id("terminal-exit")).to_have_text("Exited with code 0.")
    expect(terminal).to_have_css("font-family", re.compile("monospace"))

    injected = page.locator(INJECTED)
    assert injected.count() == 0, [injected.nth(i).evaluate("e => e.outerHTML") for i in range(injected.count())]


def test_markdown_a_diff_and_a_terminal_are_rendered_and_their_markup_stays_text(watched):
    page = watched.page
    start_scenario(page, "rich-timeline")
    agent_message(page, "END-OF-TIMELINE")
    turn_over(page)
    check_rich_timeline(page)
    watched.assert_quiet()

    page.reload()  # the page rendered by the server in one piece, rather than from live fragments
    check_rich_timeline(page)
    watched.assert_quiet()


def test_a_streamed_turn_and_a_follow_up_make_no_console_error(watched):
    """Each live message used to try to delete "No messages yet" again (htmx:oobErrorNoTarget)."""
    page = watched.page
    start_scenario(page, "tool-calls")
    agent_message(page, "all 42 tests pass")
    turn_over(page)
    page.get_by_test_id("session-prompt-input").fill("Please fix the login bug")
    page.get_by_test_id("session-prompt-submit").click()
    agent_message(page, "You said")
    turn_over(page)
    expect(page.get_by_test_id("timeline-empty")).to_be_hidden()
    watched.assert_quiet()


def distance_from_end(page) -> float:
    return page.get_by_test_id("timeline").evaluate("t => t.scrollHeight - t.scrollTop - t.clientHeight")


def test_the_timeline_follows_a_stream_until_the_operator_scrolls_up(watched):
    page = watched.page
    timeline = page.get_by_test_id("timeline")
    jump = page.get_by_test_id("timeline-jump")
    start_scenario(page, "long-stream")
    # Long enough to scroll, and still growing: it stays at its end.
    page.wait_for_function(
        "() => { const t = document.getElementById('timeline'); return t.scrollHeight > t.clientHeight + 400 }"
    )
    expect(timeline).to_have_attribute("data-stuck", "true")
    height = timeline.evaluate("t => t.scrollHeight")
    page.wait_for_function(f"() => document.getElementById('timeline').scrollHeight > {height} + 200")
    assert distance_from_end(page) <= 32
    expect(jump).to_be_hidden()

    # The operator scrolls up to read: it stays where they are while the stream goes on.
    timeline.hover(position={"x": 40, "y": 40})
    page.mouse.wheel(0, -600)
    expect(timeline).to_have_attribute("data-stuck", "false")
    expect(jump).to_be_visible()
    top = timeline.evaluate("t => t.scrollTop")
    height = timeline.evaluate("t => t.scrollHeight")
    page.wait_for_function(f"() => document.getElementById('timeline').scrollHeight > {height} + 200")
    assert abs(timeline.evaluate("t => t.scrollTop") - top) <= 1
    assert distance_from_end(page) > 200

    # Back to the latest: it follows again.
    jump.click()
    expect(timeline).to_have_attribute("data-stuck", "true")
    expect(jump).to_be_hidden()
    height = timeline.evaluate("t => t.scrollHeight")
    page.wait_for_function(f"() => document.getElementById('timeline').scrollHeight > {height} + 200")
    assert distance_from_end(page) <= 32

    # And scrolling back down to the end by hand does the same (over the timeline, not its jump button).
    timeline.hover(position={"x": 40, "y": 40})
    page.mouse.wheel(0, -600)
    expect(timeline).to_have_attribute("data-stuck", "false")
    page.mouse.wheel(0, 100_000)
    expect(timeline).to_have_attribute("data-stuck", "true")
    page.get_by_test_id("session-cancel").click()
    turn_over(page)
    watched.assert_quiet()


def check_times(page, count):
    times = page.get_by_test_id("message-time")
    expect(times).to_have_count(count)
    now = datetime.now(UTC)
    for index in range(count):
        stamp = datetime.fromisoformat(times.nth(index).get_attribute("datetime"))
        assert abs(stamp - now) < timedelta(minutes=5)
        expect(times.nth(index)).to_have_attribute("data-localised", "true")
        expect(times.nth(index)).to_have_text(re.compile(r"\d{1,2}\D\d{2}"))


def test_each_session_has_a_divider_and_each_message_its_time(watched):
    page = watched.page
    messages = page.get_by_test_id("timeline-message")
    dividers = page.get_by_test_id("session-divider")
    start_scenario(page, "simple-message")
    agent_message(page, "simple message from the mock agent")
    turn_over(page)
    expect(dividers).to_have_count(1)
    expect(dividers).to_contain_text("Mock agent session")
    check_times(page, messages.count())

    page.get_by_test_id("session-stop").click()
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-agent-live", "false")
    start_scenario(page, "simple-message")
    expect(page.locator("[data-testid=timeline-message][data-author=agent]")).to_have_count(2)
    turn_over(page)
    expect(dividers).to_have_count(2)

    def order():
        items = page.locator("#timeline > li:not(#timeline-empty)")
        return [items.nth(i).get_attribute("data-testid") for i in range(items.count())]

    # Live, and as the server renders it: the second session opens with its divider, before its prompt.
    for _ in range(2):
        sequence = order()
        assert sequence[0] == "session-divider"
        assert sequence.count("session-divider") == 2
        second = sequence.index("session-divider", 1)
        first_of_second = page.locator("#timeline > li").nth(second + 2)  # after "No messages yet" and the divider
        expect(first_of_second).to_have_attribute("data-author", "user")
        check_times(page, messages.count())
        page.reload()
    watched.assert_quiet()


def test_a_tool_call_whose_permission_was_answered_is_not_left_pending(watched):
    page = watched.page
    start_scenario(page, "permission-flow")
    tool = page.get_by_test_id("tool-call")
    expect(tool).to_have_attribute("data-status", "pending", timeout=20_000)
    expect(tool.get_by_test_id("tool-call-status")).to_have_text("Pending")
    page.locator("[data-testid=permission-option][data-option-id=allow-once]").click()
    expect(tool).to_have_attribute("data-status", "in_progress")
    expect(tool.get_by_test_id("tool-call-status")).to_have_text("Running")
    turn_over(page)
    page.reload()
    expect(tool).to_have_attribute("data-status", "in_progress")
    watched.assert_quiet()


def test_a_question_is_said_once_in_the_overlay_and_kept_in_the_timeline_once_answered(watched):
    page = watched.page
    start_scenario(page, "elicit-single")
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_be_visible(timeout=20_000)
    # The request's message is its question's prompt, said once
    # (docs/decisions/mapping.md#d10-empty-enums-and-the-prompt-chain).
    expect(overlay.get_by_text("Pick a colour")).to_have_count(1)
    expect(overlay.get_by_test_id("clarification-context")).to_have_count(0)
    # The question is in the overlay, not above it in the timeline as well.
    record = page.get_by_test_id("clarification-record")
    expect(record).to_have_count(1)
    expect(record).to_be_hidden()
    expect(page.get_by_test_id("timeline").get_by_text("Pick a colour")).to_be_hidden()

    overlay.get_by_test_id("clarification-option").filter(has_text="Blue").click()
    overlay.get_by_test_id("clarification-submit").click()
    expect(record).to_be_visible()
    expect(record).to_have_attribute("data-status", "answered")
    expect(record.locator(".msg-body")).to_have_text("Pick a colour")
    expect(record.get_by_test_id("clarification-record-answer")).to_have_text("Blue")
    turn_over(page)
    watched.assert_quiet()


def test_the_favicon_is_served(watched):
    page = watched.page
    icon = page.locator("link[rel=icon]")
    expect(icon).to_have_attribute("type", "image/svg+xml")
    response = page.request.get(icon.evaluate("link => link.href"))
    assert response.status == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert response.text().startswith("<svg")
    watched.assert_quiet()
