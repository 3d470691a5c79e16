"""Typed forms in the overlay (docs/decisions.md#typed-forms): native controls, required marks,
hints, defaults, the overlay's own checks before sending, and agentctl's verdict shown inline.

The mock agent forwards an MCP server's form (``elicit-typed``): a boolean, an
integer from 1 to 5, a number, e-mail, URL, date and date-time fields, a
required string with lengths and a pattern, and a multi-select with item counts.
"""

from playwright.sync_api import expect

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
    expect(control(page, "service")).to_have_attribute("maxlength", "12")
    go_to(page, "window")
    expect(control(page, "window")).to_have_attribute("type", "datetime-local")


def test_the_overlay_checks_before_sending_and_the_agent_gets_typed_values(browser, server):
    page = typed_form(browser, server, "typed-answers")
    submit = page.get_by_test_id("clarification-submit")

    # Nothing of the required fields: nothing is sent, the first one is brought up and marked.
    submit.click()
    expect(card(page, "contact")).to_be_visible()
    expect(problem(page, "contact")).to_have_text("This question needs an answer.")
    expect(problem(page, "contact")).to_have_attribute("data-source", "client")
    expect(problem(page, "service")).to_have_text("This question needs an answer.")
    expect(page.get_by_test_id("clarification-outcome")).to_have_attribute("data-outcome", "unfit")

    control(page, "contact").fill("ops at example")
    # The sentence follows what is typed.
    expect(problem(page, "contact")).to_have_text("This must be an e-mail address.")
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
    expect(problem(page, "replicas")).to_have_text("This must be at most 5.")
    expect(problem(page, "service")).to_have_text("This is not in the form the agent asked for.")

    control(page, "replicas").fill("3")
    go_to(page, "service")
    control(page, "service").fill("web-api")
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
