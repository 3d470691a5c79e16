"""Codex's forms in the overlay (docs/decisions/mapping.md#codex-forms).

The mock agent sends codex-acp 2.6.0's own `elicitation/create` frames
(`elicit-codex`, `elicit-codex-async`) and says what reached it: the note is the
question's companion, kept beside the pick, and sent with "None of the above"
when typed alone; an async question says the agent goes on without waiting.
"""

from playwright.sync_api import expect

from testing_support.browser import agent_said, card, fresh_task, option
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def test_a_codex_question_is_asked_by_its_title_and_its_note_goes_beside_the_pick(browser, server):
    page, _ = fresh_task(browser, server, "codex-note")
    start(page, "elicit-codex")
    cards = page.get_by_test_id("clarification-question-card")
    expect(cards).to_have_count(1)  # the note is no question of its own
    colour = card(page, "colour")
    expect(colour.get_by_test_id("clarification-prompt")).to_have_text("Which colour should I use?")
    expect(colour.locator(".clarification-title")).to_have_text("Colour")
    expect(colour).to_have_attribute("data-note", "true")
    expect(colour).to_have_attribute("data-other-option", "None of the above")
    note = colour.get_by_test_id("clarification-input")
    expect(note).to_have_attribute("placeholder", "Add a note to your choice, or type your own answer")
    expect(page.get_by_test_id("clarification-delivery")).to_have_count(0)

    option(colour, "Red").click()
    note.fill("because it is warm")
    # The pick stays: Codex adds the note to it.
    expect(option(colour, "Red")).to_have_attribute("data-selected", "true")
    option(colour, "Blue").click()
    option(colour, "Red").click()
    expect(note).to_have_value("because it is warm")  # a pick keeps the note too
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {
        "action": "accept",
        "content": {"colour": "Red", "colour_note": "because it is warm"},
    }
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")


def test_a_note_alone_answers_a_required_codex_question_as_none_of_the_above(browser, server):
    page, _ = fresh_task(browser, server, "codex-note-alone")
    start(page, "elicit-codex")
    colour = card(page, "colour")
    expect(colour).to_have_attribute("data-required", "true")
    colour.get_by_test_id("clarification-input").fill("green")
    page.get_by_test_id("clarification-submit").click()
    expect(colour.get_by_test_id("clarification-problem")).to_be_hidden()
    assert agent_said(page, "Answer:") == {
        "action": "accept",
        "content": {"colour": "None of the above", "colour_note": "green"},
    }


def test_picking_none_of_the_above_asks_for_the_note(browser, server):
    page, _ = fresh_task(browser, server, "codex-other")
    start(page, "elicit-codex")
    colour = card(page, "colour")
    option(colour, "None of the above").click()
    expect(colour.get_by_test_id("clarification-input")).to_be_focused()


def test_an_async_codex_question_lets_the_agent_work_on_and_reaches_it_in_the_same_turn(browser, server):
    page, _ = fresh_task(browser, server, "codex-async")
    start(page, "elicit-codex-async")
    delivery = page.get_by_test_id("clarification-delivery")
    expect(delivery).to_have_text("The agent goes on without waiting for your answer.")
    expect(delivery).to_have_attribute("data-delivery", "async")
    # Not awaited: the agent says more while the question is open, its turn still running.
    said = page.locator("[data-testid=timeline-message][data-author=agent][data-type=message]")
    expect(said).to_contain_text("I keep working while you answer.")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "true")
    question = card(page, "question_0")
    expect(question.get_by_test_id("clarification-prompt")).to_have_text("Pick_a_colour")
    option(question, "Blue").click()
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
