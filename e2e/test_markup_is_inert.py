"""Every string an agent supplies is shown as text, never run or parsed as markup.

The mock agent plays ``hostile-markup``: a thought, a message, a plan, a tool
call's title and output, a permission request and its options (one option id
included), an ACP elicitation (message, question titles, prompts, option
labels, descriptions, a property key and an option const) and an
``ask_user_question_kandev`` call (context, question id and title, prompt,
labels, descriptions), each carrying ``<img onerror>``, ``<script>``,
``"><svg onload>``, ``{{ }}``, ``${ }``, a ``javascript:`` link and an iframe.
The operator answers everything from the page, and the answers that reach the
agent carry the hostile ids back verbatim. Throughout, no dialog opens, no
script error happens and no element the agent wrote exists in the page; on
reload (the server-rendered page rather than live fragments) too.

Where the agent writes Markdown (its messages and thoughts, a tool call's
text, a question's prompt and message) it is rendered as Markdown, safely:
the markup stays text, and only Markdown's own syntax formats it.
"""

import json
import re

from playwright.sync_api import expect

from testing_support.browser import fresh_task
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

#: Anything the payloads would have created, had they been parsed as HTML.
INJECTED = ", ".join(
    [
        "img[src=x]",
        "svg[onload]",
        "[onerror]",
        "[onload]",
        "script:not([src])",
        "a[href^='javascript:' i]",
        "iframe",
    ]
)
#: The elicitation's first property key, its first option's const, the permission
#: option id and the MCP question id: hostile ids that must round-trip verbatim.
ELICIT_KEY = "q\"><img src=x onerror=alert('key')>"
ELICIT_CONST = "\"><svg onload=alert('const')>"
PERMISSION_OPTION_ID = "allow\"><img src=x onerror=alert('option-id')>"
MCP_ID = "x\"><img src=x onerror=alert('mcp-id')>"


def payload(tag: str) -> str:
    """What hostile-markup.json sends at the place named ``tag`` (kept in step with it)."""
    return (
        f"<img src=x onerror=alert('{tag}')><script>alert('{tag}')</script>\"><svg onload=alert('{tag}')>"
        f"{{{{7*7}}}} ${{7*7}} <a href=\"javascript:alert('{tag}')\">{tag}</a> "
        f"<iframe srcdoc=\"<script>alert('{tag}')</script>\"></iframe>"
    )


def as_markdown(text: str) -> str:
    """What the operator reads of ``text`` rendered as Markdown: ``7*7}} ${7*`` is emphasis, the rest text."""
    return text.replace("{{7*7}} ${7*7}", "{{77}} ${77}")


def expect_markdown(locator, tag: str) -> None:
    """``locator`` shows payload ``tag`` as the agent's Markdown: its markup as text, its ``*…*`` as emphasis."""
    expect(locator).to_have_text(as_markdown(payload(tag)))
    expect(locator.locator("em")).to_have_text("7}} ${7")


def assert_inert(page, dialogs, errors):
    assert dialogs == [], f"a dialog opened: {dialogs}"
    assert errors == [], f"a script error happened: {errors}"
    injected = page.locator(INJECTED)
    assert injected.count() == 0, [injected.nth(i).evaluate("e => e.outerHTML") for i in range(injected.count())]
    # {{ 7*7 }} and ${7*7} were not evaluated by anything. A clock time such as
    # 12:49 is the timeline's own text, not an evaluation, so times are left out.
    text = re.sub(r"\b\d{1,2}:\d{2}\b", "", page.get_by_test_id("timeline").inner_text())
    assert "49" not in text


def agent_message(page, marker):
    """The agent message that ends with ``marker``, once it has streamed in whole."""
    message = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text=marker)
    expect(message).to_have_count(1, timeout=20_000)
    text = message.get_by_test_id("message-body").inner_text()
    return text[: text.index(marker)].rstrip()


def reported_json(page, prefix, marker):
    text = agent_message(page, marker)
    value, _ = json.JSONDecoder().raw_decode(text[text.index(prefix) + len(prefix) :].lstrip())
    return value


def check_timeline(page):
    """The streamed pieces, as text, where the operator reads them."""
    timeline = page.get_by_test_id("timeline")
    thought = timeline.locator("[data-testid=timeline-message][data-type=thinking]")
    expect(thought).to_contain_text(as_markdown(payload("thought")), timeout=20_000)
    if thought.locator("details").get_attribute("open") is None:
        thought.locator("summary").click()
    expect(thought.locator(".msg-body")).to_be_visible()
    expect_markdown(thought.locator(".msg-body"), "thought")

    message = timeline.locator("[data-testid=timeline-message][data-type=message]").filter(has_text="message</a>")
    expect_markdown(message.get_by_test_id("message-body"), "message")

    entries = timeline.get_by_test_id("plan-entry")
    expect(entries).to_have_text([payload("plan-1"), payload("plan-2")])

    tool = timeline.get_by_test_id("tool-call")
    expect(tool).to_have_attribute("data-status", "completed")
    expect(tool.locator(".tool-title")).to_have_text(payload("tool-title"))
    expect_markdown(tool.locator(".tool-output"), "tool-output")


def test_agent_supplied_markup_and_script_stay_text(browser, server):
    page, _ = fresh_task(browser, server, "inert")
    dialogs, errors = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("pageerror", lambda error: errors.append(str(error)))
    start(page, "hostile-markup")

    check_timeline(page)

    # The permission request: title and option names as text, the hostile option id sent back verbatim.
    card = page.get_by_test_id("permission-card")
    expect(card).to_contain_text(payload("permission-title"), timeout=20_000)
    allow = card.get_by_test_id("permission-option").filter(has_text="permission-allow</a>")
    expect(allow).to_have_text(payload("permission-allow"))
    expect(allow).to_have_attribute("data-option-id", PERMISSION_OPTION_ID)
    expect(card.get_by_test_id("permission-option").filter(has_text="permission-reject</a>")).to_have_text(
        payload("permission-reject")
    )
    assert_inert(page, dialogs, errors)
    allow.click()
    expect(card.get_by_test_id("permission-outcome")).to_contain_text(payload("permission-allow"))
    assert agent_message(page, "END-OF-PERMISSION") == f"Permission selected with {PERMISSION_OPTION_ID}"

    # The elicitation: every string in the overlay as text.
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "elicitation", timeout=20_000)
    expect_markdown(overlay.get_by_test_id("clarification-context"), "elicit-message")
    cards = overlay.get_by_test_id("clarification-question-card")
    expect(cards).to_have_count(2)
    by_id = {cards.nth(i).get_attribute("data-question-id"): cards.nth(i) for i in range(2)}
    assert set(by_id) == {ELICIT_KEY, "multi"}
    # The timeline keeps one record per question, in the overlay's order, then the MCP one.
    record_prompts = [payload("elicit-prompt-1" if qid == ELICIT_KEY else "elicit-prompt-2") for qid in by_id]
    record_prompts = [as_markdown(prompt) for prompt in [*record_prompts, payload("mcp-prompt")]]
    steps = overlay.get_by_test_id("clarification-step")
    for index, question_id in enumerate(by_id):
        number = "1" if question_id == ELICIT_KEY else "2"
        question = by_id[question_id]
        expect(steps.nth(index)).to_have_text(payload(f"elicit-title-{number}"))
        steps.nth(index).click()
        expect(question).to_be_visible()
        expect(question.locator(".clarification-title")).to_have_text(payload(f"elicit-title-{number}"))
        expect_markdown(question.locator(".clarification-prompt"), f"elicit-prompt-{number}")
        options = question.get_by_test_id("clarification-option")
        expect(options.first.get_by_test_id("clarification-option-label")).to_have_text(
            payload(f"elicit-label-{number}a")
        )
        expect(options.first.get_by_test_id("clarification-option-description")).to_have_text(
            payload(f"elicit-desc-{number}a")
        )
        expect(options.nth(1).get_by_test_id("clarification-option-label")).to_have_text(
            payload(f"elicit-label-{number}b")
        )
        options.first.click()
        expect(options.first).to_have_attribute("data-selected", "true")
    expect(by_id[ELICIT_KEY].get_by_test_id("clarification-option").first).to_have_attribute(
        "data-option-id", ELICIT_CONST
    )
    expect(by_id["multi"].get_by_test_id("clarification-option").first).to_have_attribute(
        "data-option-id", "<b>one</b>"
    )
    assert_inert(page, dialogs, errors)
    overlay.get_by_test_id("clarification-submit").click()
    assert reported_json(page, "Answer:", "END-OF-ANSWER") == {
        "action": "accept",
        "content": {ELICIT_KEY: ELICIT_CONST, "multi": ["<b>one</b>"]},
    }

    # The ask_user_question_kandev call, through Kandev's MCP tool.
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "ask_user_question", timeout=20_000)
    expect_markdown(overlay.get_by_test_id("clarification-context"), "mcp-context")
    question = overlay.get_by_test_id("clarification-question-card")
    expect(question).to_have_attribute("data-question-id", MCP_ID)
    expect(question.locator(".clarification-title")).to_have_text("<b>x</b>\"'&")
    expect_markdown(question.locator(".clarification-prompt"), "mcp-prompt")
    options = question.get_by_test_id("clarification-option")
    expect(options.get_by_test_id("clarification-option-label")).to_have_text(
        [payload("mcp-label-1"), payload("mcp-label-2")]
    )
    expect(options.get_by_test_id("clarification-option-description")).to_have_text(
        [payload("mcp-desc-1"), payload("mcp-desc-2")]
    )
    assert_inert(page, dialogs, errors)
    second = options.nth(1).get_attribute("data-option-id")
    options.nth(1).click()
    assert reported_json(page, "Tool result:", "END-OF-RESULT") == {MCP_ID: {"selected_option": second}}

    # What stays in the timeline once answered: the question records and their answers.
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false", timeout=20_000)
    records = page.get_by_test_id("clarification-record")
    expect(records).to_have_count(3)
    for index in range(3):
        expect(records.nth(index)).to_have_attribute("data-status", "answered")
    expect(records.locator(".msg-body")).to_have_text(record_prompts)
    expect(records.last.get_by_test_id("clarification-record-answer")).to_have_text(payload("mcp-label-2"))
    assert_inert(page, dialogs, errors)

    # The same page rendered by the server in one piece, rather than from live fragments.
    page.reload()
    # Its catch-up in first: a message it replaces would close a Thinking opened before.
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    check_timeline(page)
    expect(page.get_by_test_id("permission-outcome")).to_contain_text(payload("permission-allow"))
    expect(records.locator(".msg-body")).to_have_text(record_prompts)
    expect(records.last.get_by_test_id("clarification-record-answer")).to_have_text(payload("mcp-label-2"))
    assert_inert(page, dialogs, errors)


def test_answered_elicitation_records_say_what_was_answered(browser, server):
    """The timeline keeps each answered question with its answer
    (docs/user-guide.md#questions-from-the-agent-clarifications), which is
    also where option labels are rendered once more: an elicitation's record must
    show the label picked, and "Skipped" when skipped, rather than "No selection"."""
    page, _ = fresh_task(browser, server, "recorded")
    start(page, "elicit-single")
    option = page.get_by_test_id("clarification-option").filter(has_text="Blue")
    option.click()
    page.get_by_test_id("clarification-submit").click()
    record = page.get_by_test_id("clarification-record")
    expect(record.first).to_have_attribute("data-status", "answered", timeout=20_000)
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false", timeout=20_000)
    page.get_by_test_id("session-prompt-input").fill("/e2e:elicit-single")
    page.get_by_test_id("session-prompt-submit").click()
    page.get_by_test_id("clarification-skip").click()
    expect(record).to_have_count(2, timeout=20_000)
    expect(record.last).to_have_attribute("data-status", "rejected", timeout=20_000)
    expect(record.get_by_test_id("clarification-record-answer")).to_have_text(["Blue", "Skipped"])
