"""Typed forms in the overlay (docs/decisions/mapping.md#typed-forms): native controls, required marks,
hints, defaults, the browser's own checks before sending (never stricter than agentctl), and
agentctl's verdict shown inline, each problem in the same sentence either way.

The mock agent forwards an MCP server's form (``elicit-typed``): a boolean, an
integer from 1 to 5, a number, e-mail, URL, date and date-time fields, a
required string with lengths and a pattern, and a multi-select with item counts.
"""

import re

import re2
from playwright.sync_api import expect

from kandev_web.agentctl.elicitation.constraints import compile_pattern
from kandev_web.clarifications.native_checks import html_pattern
from testing_support.browser import agent_said, card, login, option
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

#: D1 order of the form's keys.
QUESTIONS = ["contact", "day", "docs", "overwrite", "ratio", "regions", "replicas", "service", "window"]


def typed_form(browser, server, username, *, timezone="Europe/Paris"):
    """A task page in ``timezone`` with the typed form open."""
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    page = browser.new_context(timezone_id=timezone).new_page()
    login(page, server, username, f"/tasks/{ids['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start(page, "elicit-typed")
    expect(page.get_by_test_id("clarification-question-card")).to_have_count(len(QUESTIONS))
    return page


def go_to(page, question_id):
    page.get_by_test_id("clarification-step").nth(QUESTIONS.index(question_id)).click()
    expect(card(page, question_id)).to_be_visible()
    return card(page, question_id)


def control(page, question_id):
    return card(page, question_id).get_by_test_id("clarification-input")


def problem(page, question_id):
    return card(page, question_id).get_by_test_id("clarification-problem")


def test_each_kind_gets_its_native_control_with_required_marks_hints_and_defaults(browser, server):
    page = typed_form(browser, server, "typed-controls")
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay.get_by_test_id("clarification-form-title")).to_have_text("Deployment settings")
    expect(overlay.get_by_test_id("clarification-form-description")).to_have_text("How the service is rolled out.")
    cards = page.get_by_test_id("clarification-question-card")
    assert [cards.nth(i).get_attribute("data-question-id") for i in range(len(QUESTIONS))] == QUESTIONS

    # Required marks on exactly the schema's required fields.
    for question_id in QUESTIONS:
        required = question_id in ("contact", "service")
        expect(card(page, question_id)).to_have_attribute("data-required", str(required).lower())
        expect(card(page, question_id).get_by_test_id("clarification-required")).to_have_count(int(required))
    expect(card(page, "contact").get_by_test_id("clarification-required")).to_have_text("Required")

    expect(control(page, "contact")).to_have_attribute("type", "email")
    expect(control(page, "contact")).to_have_attribute("required", "")
    expect(card(page, "contact").get_by_test_id("clarification-hint")).to_have_text("An e-mail address")

    go_to(page, "day")
    expect(control(page, "day")).to_have_attribute("type", "date")
    go_to(page, "docs")
    expect(control(page, "docs")).to_have_attribute("type", "url")

    # The boolean: a Yes/No radio pair, its default (false) picked.
    overwrite = go_to(page, "overwrite")
    expect(overwrite.get_by_role("radiogroup").get_by_role("radio")).to_have_count(2)
    expect(option(overwrite, "true")).to_have_text("1 Yes")
    expect(option(overwrite, "false")).to_have_attribute("aria-checked", "true")
    expect(option(overwrite, "true")).to_have_attribute("aria-checked", "false")

    go_to(page, "ratio")
    expect(control(page, "ratio")).to_have_attribute("type", "number")
    expect(control(page, "ratio")).to_have_attribute("step", "any")
    expect(card(page, "ratio").get_by_test_id("clarification-hint")).to_have_text("A number from 0 to 1")

    regions = go_to(page, "regions")
    expect(regions.get_by_role("checkbox")).to_have_count(3)
    expect(option(regions, "eu")).to_have_attribute("data-selected", "true")
    expect(regions.get_by_test_id("clarification-hint")).to_have_text("Choose 1 to 2")

    go_to(page, "replicas")
    replicas = control(page, "replicas")
    for name, value in {"type": "number", "min": "1", "max": "5", "step": "1", "value": "2"}.items():
        expect(replicas).to_have_attribute(name, value)
    expect(card(page, "replicas").get_by_test_id("clarification-hint")).to_have_text("A whole number from 1 to 5")

    go_to(page, "service")
    expect(card(page, "service").get_by_test_id("clarification-hint")).to_have_text(
        "3 to 12 characters · Matching ^[a-z-]+$"
    )
    # The browser's own limits: minlength, and the pattern searched as RE2 searches it (a text area has no
    # pattern attribute; clarification.js checks it as the browser would). No maxlength: it counts UTF-16
    # units of the untrimmed text and would stop what agentctl takes.
    expect(control(page, "service")).to_have_attribute("minlength", "3")
    expect(control(page, "service")).to_have_attribute("data-pattern", r"[\s\S]*(?:^[a-z\-]+$)[\s\S]*")
    expect(control(page, "service")).not_to_have_attribute("maxlength", re.compile(".*"))
    go_to(page, "window")
    expect(control(page, "window")).to_have_attribute("type", "datetime-local")


def test_the_overlay_checks_before_sending_and_the_agent_gets_typed_values(browser, server):
    page = typed_form(browser, server, "typed-answers")
    submit = page.get_by_test_id("clarification-submit")

    # Nothing of the required fields: nothing is sent, the first one is brought up and marked.
    submit.click()
    expect(card(page, "contact")).to_be_visible()
    # The sentences are the ones agentctl's refusal gets (clarifications/problems.py), naming the question.
    expect(problem(page, "contact")).to_have_text("“Contact” needs an answer.")
    expect(problem(page, "contact")).to_have_attribute("data-source", "client")
    expect(problem(page, "service")).to_have_text("“Service” needs an answer.")
    expect(page.get_by_test_id("clarification-outcome")).to_have_attribute("data-outcome", "unfit")
    expect(page.get_by_test_id("clarification-outcome")).to_have_text(
        "Some answers do not fit yet; see the questions marked."
    )

    control(page, "contact").fill("ops at example")
    # The sentence follows what is typed.
    expect(problem(page, "contact")).to_have_text("“Contact” must be an e-mail address.")
    control(page, "contact").fill("ops@example.com")
    expect(problem(page, "contact")).to_be_hidden()

    go_to(page, "replicas")
    control(page, "replicas").fill("9")
    go_to(page, "service")
    control(page, "service").fill("Web API")
    go_to(page, "ratio")
    control(page, "ratio").fill("0.25")
    submit.click()
    expect(card(page, "replicas")).to_be_visible()
    expect(problem(page, "replicas")).to_have_text("“Replicas” must be at most 5.")
    expect(problem(page, "service")).to_have_text("“Service” is not in the form the agent asked for.")

    # What the browser finds, each as agentctl's code says it.
    control(page, "replicas").fill("2.5")
    expect(problem(page, "replicas")).to_have_text("“Replicas” must be a whole number.")
    go_to(page, "ratio")
    control(page, "ratio").fill(".5")  # the browser takes it; it is no JSON number, which agentctl refuses
    submit.click()
    expect(problem(page, "ratio")).to_have_text("“Canary” must be a number.")
    control(page, "ratio").fill("0.25")
    go_to(page, "service")
    control(page, "service").fill("ab")
    expect(problem(page, "service")).to_have_text("“Service” must be at least 3 characters long.")
    control(page, "service").fill("web-api-gateway")
    expect(problem(page, "service")).to_have_text("“Service” must be at most 12 characters long.")

    go_to(page, "replicas")
    control(page, "replicas").fill("3")
    go_to(page, "service")
    # Spaces around it: the browser would test the pattern on them, agentctl trims first and takes it.
    control(page, "service").fill("  web-api ")
    go_to(page, "docs")
    # The URL Standard refuses a port over 65535, RFC 3986 does not: agentctl decides, so it goes.
    control(page, "docs").fill("http://runbook.example:99999/deploy")
    overwrite = go_to(page, "overwrite")
    option(overwrite, "true").click()
    regions = go_to(page, "regions")
    option(regions, "ap").click()
    go_to(page, "window")
    control(page, "window").fill("2026-12-24T10:30")
    submit.click()

    # Typed on the wire: a JSON boolean, integers and numbers, the date-time with the operator's offset.
    assert agent_said(page, "Answer:") == {
        "action": "accept",
        "content": {
            "contact": "ops@example.com",
            "docs": "http://runbook.example:99999/deploy",
            "overwrite": True,
            "ratio": 0.25,
            "regions": ["eu", "ap"],
            "replicas": 3,
            "service": "web-api",
            "window": "2026-12-24T10:30:00+01:00",
        },
    }
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    records = page.get_by_test_id("clarification-record")
    overwrite_record = records.and_(page.locator("[data-question-id=overwrite]"))
    expect(overwrite_record.get_by_test_id("clarification-record-answer")).to_have_text("Yes")
    replicas_record = records.and_(page.locator("[data-question-id=replicas]"))
    expect(replicas_record.get_by_test_id("clarification-record-answer")).to_have_text("3")


def test_agentctls_refusal_is_shown_beside_its_question(browser, server):
    """A page whose checks are out of date sends what does not fit; agentctl refuses it and says why, inline."""
    page = typed_form(browser, server, "typed-server")
    control(page, "contact").fill("ops@example.com")
    go_to(page, "service")
    control(page, "service").fill("web")
    go_to(page, "replicas")
    # As a stale page would: the overlay no longer knows the range.
    page.evaluate(
        """() => {
          const card = document.querySelector("[data-testid=clarification-question-card][data-question-id=replicas]");
          delete card.dataset.maximum;
          card.querySelector("input").removeAttribute("max");
        }"""
    )
    control(page, "replicas").fill("7")
    page.get_by_test_id("clarification-submit").click()

    expect(page.get_by_test_id("clarification-outcome")).to_have_attribute("data-outcome", "invalid")
    expect(card(page, "replicas")).to_be_visible()
    expect(problem(page, "replicas")).to_have_text("“Replicas” must be at most 5.")
    expect(problem(page, "replicas")).to_have_attribute("data-source", "server")
    expect(problem(page, "contact")).to_be_hidden()
    # The question stays open; a fitting answer still wins.
    control(page, "replicas").fill("4")
    page.get_by_test_id("clarification-submit").click()
    answer = agent_said(page, "Answer:")
    assert answer["content"]["replicas"] == 4
    assert answer["content"]["overwrite"] is False  # the default, left in place


def test_the_keyboard_model_holds_for_typed_questions(browser, server):
    page = typed_form(browser, server, "typed-keys")
    overwrite = go_to(page, "overwrite")
    option(overwrite, "false").focus()
    page.keyboard.press("1")
    expect(option(overwrite, "true")).to_have_attribute("aria-checked", "true")
    page.keyboard.press("ArrowRight")
    expect(card(page, "ratio")).to_be_visible()
    expect(control(page, "ratio")).to_be_focused()
    # Enter in a number field moves on, as in a text field.
    page.keyboard.type("0.5")
    page.keyboard.press("Enter")
    expect(card(page, "regions")).to_be_visible()
    # Tab goes from the question's field to the form's buttons, past no hidden question.
    go_to(page, "replicas")
    control(page, "replicas").focus()
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("clarification-prev")).to_be_focused()


#: Patterns an agent may send, and text to try them on: RE2's search against the browser's pattern attribute.
PATTERNS = {
    "^[a-z-]+$": ["web-api", "Web API", "web_api", ""],
    "a.c": ["abc", "a\nc", "a\rc", "a\u2028c", "xxa😀cxx"],
    r"^\d{3}(?:-\d{4})?$": ["555", "555-1234", "555-12", "٣٣٣"],
    "[]a]": ["]", "a", "b"],
    "[^.|&&(]": ["&", ".", "x"],
    "é+": ["café", "cafe"],
    "^(?:ab|cd)*$": ["abcd", "abc", ""],
}


def test_the_browser_finds_what_re2_finds_with_each_pattern_the_page_writes(browser):
    """The browser's pattern attribute on an input, and the same pattern as clarification.js tries a text area's."""
    page = browser.new_page()
    page.set_content("<input id=field>")
    for pattern, texts in PATTERNS.items():
        written = html_pattern(pattern)
        assert written is not None
        assert compile_pattern(pattern) is not None
        for text in texts:
            as_input, as_text_area = page.evaluate(
                """([pattern, text]) => {
                  const field = document.getElementById("field");
                  field.setAttribute("pattern", pattern);
                  field.value = text;
                  // An input drops line breaks from its value: such a text is only a text area's.
                  const input = field.value === text ? !field.validity.patternMismatch : null;
                  return [input, new RegExp(`^(?:${pattern})$`, "v").test(text)];
                }""",
                [written, text],
            )
            searched = re2.search(pattern, text) is not None
            assert as_text_area == searched, (pattern, text)
            # An empty value is never a mismatch to the browser: whether it must be given is required's to say.
            assert as_input in (None, searched or text == ""), (pattern, text)
