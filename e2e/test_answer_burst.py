"""Two browser contexts fire twenty answers each at one elicitation: one is delivered."""

from playwright.sync_api import expect

from testing_support.browser import agent_said, fresh_task, login
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

# Started without waiting, so both contexts' twenty requests are in flight together.
BURST = """([url, choice]) => {
    const headers = JSON.parse(document.body.getAttribute('hx-headers'));
    const body = new URLSearchParams({'answer-question_0-option': choice, action: 'submit'});
    window.burst = Promise.all(Array.from({length: 20}, () =>
        fetch(url, {method: 'POST', headers, body}).then((r) => r.status)));
}"""


def test_forty_concurrent_answers_one_delivery(browser, server):
    first, ids = fresh_task(browser, server, "burst")
    second = browser.new_context().new_page()
    login(second, server, "burst", f"/tasks/{ids['task_ids'][0]}/")
    start(first, "elicit-single")
    for page in (first, second):
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()

    # The HTTP endpoint (clients without JavaScript, API use); the page itself answers on its socket.
    url = first.get_by_test_id("clarification-form").get_attribute("action")
    first.evaluate(BURST, [url, "Red"])
    second.evaluate(BURST, [url, "Blue"])
    statuses = first.evaluate("window.burst") + second.evaluate("window.burst")
    assert statuses.count(204) == 1, statuses
    assert statuses.count(200) == 39  # each told it was already answered
    answer = agent_said(first, "Answer:")
    assert answer["action"] == "accept"
    assert answer["content"]["question_0"] in {"Red", "Blue"}
    expect(first.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Answer:")).to_have_count(
        1
    )
