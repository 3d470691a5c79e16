"""The overlay's answers travel as frames on the task page's socket, not as HTTP requests.

Both question paths (an ACP elicitation, the flag on for this module, and
ask_user_question_kandev) and the outcomes an operator is told.
"""

import json
import os
import signal
from urllib.parse import urlsplit

from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, agent_said, agentctl_pid, login, option
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

#: Every outcome the page is told, in order (#answer-outcomes itself keeps the last few).
COUNT_OUTCOMES = """
window.outcomes = [];
document.addEventListener("htmx:oobAfterSwap", (event) => {
    const outcomes = event.detail.target;
    if (outcomes.id === "answer-outcomes") window.outcomes.push(outcomes.lastElementChild.dataset.outcome);
});
"""


class Traffic:
    """What the page sends: its HTTP requests after load, and its frames on the task socket."""

    def __init__(self, page, task_id: int):
        self.posts: list[str] = []
        self.frames: list[dict] = []
        page.on("request", lambda request: request.method != "GET" and self.posts.append(request.url))
        page.on("websocket", lambda socket: self._watch(socket, task_id))

    def _watch(self, socket, task_id: int) -> None:
        # The page adds what it shows to its socket URL (``?after=…``), so the path is what names the task.
        if urlsplit(socket.url).path == f"/ws/tasks/{task_id}/":
            socket.on("framesent", lambda payload: self.frames.append(json.loads(payload)))

    def answers(self) -> list[dict]:
        return [frame for frame in self.frames if frame.get("type") == "clarification.answer"]


def _open(browser, server, username, *, task_id=None):
    """A task page (a fresh task, unless ``task_id``) whose traffic is watched from before its socket opens."""
    if task_id is None:
        task_id = server.create_operator(username, workspace=f"{username}'s", tasks=True)["task_ids"][0]
    page = browser.new_context().new_page()
    page.add_init_script(COUNT_OUTCOMES)
    traffic = Traffic(page, task_id)
    login(page, server, username, f"/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    traffic.posts.clear()  # the login form
    return page, traffic


def test_an_elicitation_answer_is_a_frame_on_the_task_socket(browser, server):
    page, traffic = _open(browser, server, "frames-elicit")
    start(page, "elicit-single")
    overlay = page.get_by_test_id("clarification-overlay")
    pending_id = overlay.get_attribute("data-pending-id")
    traffic.posts.clear()  # Start agent is a POST of its own

    option(page, "Blue").click()
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
    expect(overlay).to_have_count(0)

    [sent] = traffic.answers()
    assert (sent["pending_id"], sent["action"], sent["answer-question_0-option"]) == (pending_id, "submit", "Blue")
    assert traffic.posts == []


def test_an_ask_user_question_answer_is_a_frame_on_the_task_socket(browser, server):
    page, traffic = _open(browser, server, "frames-ask")
    start(page, "clarification")
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_be_visible(timeout=AGENT_STARTS_MS)
    traffic.posts.clear()

    page.get_by_test_id("clarification-option").filter(has_text="SQLite").click()
    expect(overlay).to_have_count(0)
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")

    [sent] = traffic.answers()
    assert sent["answer-db-option"] == "db_opt3"
    assert traffic.posts == []


def test_skip_is_sent_on_the_socket_with_its_reason(browser, server):
    page, traffic = _open(browser, server, "frames-skip")
    start(page, "elicit-single")
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_be_visible(timeout=AGENT_STARTS_MS)
    traffic.posts.clear()

    page.get_by_test_id("clarification-skip-reason").fill("Not my call")
    page.get_by_test_id("clarification-skip").click()
    assert agent_said(page, "Answer:") == {"action": "decline"}
    [sent] = traffic.answers()
    assert (sent["action"], sent["reject_reason"]) == ("skip", "Not my call")
    assert traffic.posts == []


def test_an_answer_that_does_not_fit_is_told_inline_and_can_be_sent_again(browser, server):
    """A frame whose option the question does not have: the outcome and a sentence, the buttons back."""
    page, traffic = _open(browser, server, "frames-bad")
    start(page, "elicit-single")
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_be_visible(timeout=AGENT_STARTS_MS)
    # As a tampered page would send it: an option that is not one of the question's.
    page.evaluate(
        """() => {
            const input = document.querySelector("[data-testid=clarification-form] input[data-role=selected]");
            input.value = "Purple";
        }"""
    )
    page.get_by_test_id("clarification-submit").click()
    expect(page.get_by_test_id("clarification-outcome")).to_have_attribute("data-outcome", "invalid")
    # agentctl's problem (unknown_option) as a sentence naming the question, never its raw entry.
    refusal = page.get_by_test_id("toast").filter(has_text="picks an option")
    sentence = "Your answer to “Colour” picks an option the question does not offer."
    expect(refusal).to_contain_text(sentence)
    expect(refusal).not_to_contain_text("unknown_option")
    expect(page.get_by_test_id("clarification-form")).to_have_attribute("data-sending", "false")
    expect(page.get_by_test_id("clarification-submit")).to_be_enabled()

    option(page, "Red").click()
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Red"}}
    assert len(traffic.answers()) == 2


def test_forty_answer_frames_from_two_windows_one_delivery(browser, server):
    """Twenty frames from each of two windows, all in flight together: one reaches the agent."""
    page, traffic = _open(browser, server, "frames-burst")
    task_id = int(page.get_by_test_id("task-live").get_attribute("data-task-id"))
    other, other_traffic = _open(browser, server, "frames-burst", task_id=task_id)
    start(page, "elicit-single")
    for each in (page, other):
        expect(each.get_by_test_id("clarification-overlay")).to_be_visible(timeout=AGENT_STARTS_MS)
    burst = """(choice) => {
        const form = document.querySelector("[data-testid=clarification-form]");
        form.querySelector("input[data-role=selected]").value = choice;
        for (let i = 0; i < 20; i++) htmx.trigger(form, "submit");
    }"""
    # agentctl holds still while both windows send (each burst's frames are on the socket when its
    # evaluate returns), so the first answer's settlement cannot take the other window's overlay away
    # first; it then takes all forty in the order they reached it.
    pid = agentctl_pid(server, task_id)
    os.kill(pid, signal.SIGSTOP)
    try:
        page.evaluate(burst, "Red")
        other.evaluate(burst, "Blue")
    finally:
        os.kill(pid, signal.SIGCONT)
    answer = agent_said(page, "Answer:")
    assert answer["action"] == "accept"
    assert answer["content"]["question_0"] in {"Red", "Blue"}
    expect(page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Answer:")).to_have_count(
        1
    )
    assert len(traffic.answers()) == len(other_traffic.answers()) == 20
    outcomes = []
    for each in (page, other):
        each.wait_for_function("() => window.outcomes.length === 20")
        outcomes += each.evaluate("window.outcomes")
    assert outcomes.count("delivered") == 1, outcomes
    assert set(outcomes) == {"delivered", "already_settled"}
