"""An operator switches the menu to Deutsch: the board and a task page, live parts included, speak German; and back."""

import pytest
from playwright.sync_api import expect

from testing_support.browser import fresh_task, login, start_scenario, watched_page


@pytest.fixture(scope="module")
def greta(server):
    return server.create_operator("greta", workspace="Translations", tasks=True)


def language_cookie(page) -> str | None:
    return next((c["value"] for c in page.context.cookies() if c["name"] == "django_language"), None)


def test_the_operator_switches_to_german_and_back(browser, server, greta):
    board_url = f"{server.url}/boards/{greta['board_id']}/"
    task_url = f"{server.url}/tasks/{greta['task_ids'][0]}/"
    page = watched_page(browser, server, "greta", f"/boards/{greta['board_id']}/", live="board-live")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_test_id("language-switch")).to_have_attribute("data-language", "en")
    expect(page.get_by_test_id("task-create-submit")).to_have_text("Add task")

    page.get_by_test_id("language-de").click()
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page).to_have_url(board_url)
    expect(page.get_by_test_id("language-switch")).to_have_attribute("data-language", "de")
    expect(page.get_by_test_id("language-de")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("nav-notifications")).to_have_text("Benachrichtigungen")
    expect(page.get_by_test_id("nav-logout")).to_have_text("Abmelden")
    expect(page.get_by_test_id("task-create-submit")).to_have_text("Aufgabe hinzufügen")
    expect(page.get_by_test_id("task-form-title")).to_have_attribute("placeholder", "Was ist zu tun?")
    assert language_cookie(page) == "de"

    # The board's socket renders for this viewer too: its catch-up and a card it brings live are German.
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    expect(page.get_by_test_id("kanban-column-empty").first).to_have_text("Keine Aufgaben")
    page.get_by_test_id("task-form-title").fill("Übersetzen")
    page.get_by_test_id("task-create-submit").click()
    card = page.locator("li[data-task-id]").filter(has_text="Übersetzen")
    expect(card.get_by_test_id("task-edit")).to_have_text("Bearbeiten")
    expect(card.get_by_test_id("task-delete")).to_have_text("Löschen")

    # The choice is remembered: a task page opened afresh is German, its live parts too.
    page.goto(task_url)
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    expect(page.get_by_test_id("session-start-submit")).to_have_text("Agent starten")
    expect(page.get_by_test_id("task-sessions-empty")).to_have_text("An dieser Aufgabe hat noch kein Agent gearbeitet.")
    expect(page.get_by_test_id("timeline-empty")).to_have_text("Noch keine Nachrichten.")

    page.get_by_test_id("language-en").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page).to_have_url(task_url)
    expect(page.get_by_test_id("session-start-submit")).to_have_text("Start agent")
    expect(page.get_by_test_id("nav-logout")).to_have_text("Log out")
    assert language_cookie(page) == "en"


def test_the_switch_works_without_javascript(browser, server, greta):
    page = browser.new_context(java_script_enabled=False).new_page()
    login(page, server, "greta", f"/boards/{greta['board_id']}/")
    page.get_by_test_id("language-de").click()
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.get_by_test_id("task-create-submit")).to_have_text("Aufgabe hinzufügen")


def test_a_question_arrives_live_in_german_on_a_german_page_and_in_english_on_an_english_one(browser, server):
    german, ids = fresh_task(browser, server, "karla")
    german.get_by_test_id("language-de").click()
    expect(german.locator("html")).to_have_attribute("lang", "de")
    expect(german.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    english = browser.new_context().new_page()
    login(english, server, "karla", f"/tasks/{ids['task_ids'][0]}/")
    expect(english.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")

    start_scenario(german, "clarification")
    for page, skip in ((german, "Alle Fragen überspringen"), (english, "Skip all questions")):
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
        expect(page.get_by_test_id("clarification-skip")).to_have_text(skip)
    expect(german.get_by_test_id("session-state")).to_have_text("Braucht Ihre Antwort")
