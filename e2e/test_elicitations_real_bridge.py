"""The real Claude ACP bridge as a task's agent, its AskUserQuestion answered in the overlay.

The web app starts agentctl with an agent profile whose command is the
installed bridge (``tests/bridge`` installs and finds it; a missing bridge is a
failure, never a skip) and whose environment is ``tests/bridge``'s offline
setup: the Claude CLI talks to a scripted fake Messages API in this test
process, which answers the operator's prompt with an AskUserQuestion call (two
questions, the second multi-select). The bridge turns it into
``elicitation/create``; the operator answers in the browser; the spec checks
the tool result the fake received, keyed by question text, and that the same
turn ended, with one operator prompt.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.bridge import BRIDGE_VERSIONS, Bridge, find_bridge
from testing_support.bridge.ask_script import COLOUR, ENVS, FINAL_TEXT, fake_api, prompt
from testing_support.bridge.fake_messages_api import DenyingProxy, FakeMessagesApi, tool_result_text
from testing_support.bridge.harness import marked_processes
from testing_support.bridge.profiles import claude_bridge_environment, create_profile, kill_marked, wait_until_gone
from testing_support.browser import card, login, option

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

MARKER = "KANDEV-E2E-BRIDGE-PROBE"
PROMPT = prompt(MARKER)
#: The answers as the model reads them: keyed by question text, multi-select in declaration order.
EXPECTED_ANSWERS = {COLOUR: "Blue", ENVS: "dev, prod"}
#: ``"question"="answer"`` pairs in the tool result the model gets.
ANSWER_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"="((?:[^"\\]|\\.)*)"')

#: The bridge starts, spawns the CLI and the fake answers: seconds, not the 5 s default.
AGENT_STEP_MS = 60_000


@dataclass
class ClaudeRun:
    bridge: Bridge
    api: FakeMessagesApi
    proxy: DenyingProxy
    env: dict[str, str]
    workdir: Path
    marker: str

    def explain(self) -> str:
        lines = ["fake Messages API:", *(f"  {line}" for line in self.api.summary())]
        return "\n".join([*lines, f"proxy attempts: {self.proxy.attempts}"])


@pytest.fixture(params=BRIDGE_VERSIONS)
def claude(request, tmp_path):
    """One bridge version, offline, and whatever of its run is left killed afterwards."""
    bridge = find_bridge(request.param)
    api = fake_api(MARKER)
    marker = uuid.uuid4().hex
    workdir = tmp_path / "project"
    workdir.mkdir()
    with DenyingProxy() as proxy, api:
        env = claude_bridge_environment(bridge, tmp_path, api=api, proxy=proxy, marker=marker)
        try:
            yield ClaudeRun(bridge, api, proxy, env, workdir, marker)
        finally:
            # Normally nothing is left (the test checks); after a failure, clean up
            # before the fake API and the proxy go away.
            kill_marked(marker)


@pytest.mark.timeout(120)
def test_askuserquestion_answered_in_the_overlay_reaches_the_model(browser, server, claude):
    username = f"claude-{claude.bridge.version.replace('.', '-')}"
    profile = f"Claude bridge {claude.bridge.version}"
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    create_profile(
        server,
        workspace_id=ids["workspace_id"],
        name=profile,
        agent_id="claude-acp",
        command=claude.bridge.argv,
        env=claude.env,
        working_dir=str(claude.workdir),
    )
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{ids['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")

    page.get_by_test_id("session-start-profile").select_option(label=profile)
    page.get_by_test_id("session-start-prompt").fill(PROMPT)
    page.get_by_test_id("session-start-submit").click()

    # The model called AskUserQuestion; the bridge's form is in the overlay.
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "elicitation", timeout=AGENT_STEP_MS)
    requester = page.get_by_test_id("clarification-requester")
    expect(requester).to_contain_text(f"{profile} asks")
    expect(requester).to_have_attribute("data-requester", "agent")
    cards = page.get_by_test_id("clarification-question-card")
    expect(cards).to_have_count(2)
    assert [cards.nth(i).get_attribute("data-question-id") for i in range(2)] == ["question_0", "question_1"]
    first, second = card(page, "question_0"), card(page, "question_1")
    expect(first).to_have_attribute("data-kind", "single")
    expect(first).to_contain_text(COLOUR)
    expect(option(first, "Red").get_by_test_id("clarification-option-description")).to_have_text("The warm one.")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "RUNNING")
    (ask,) = claude.api.of_kind("ask")
    # The marker reaches the bridge, so the check that nothing outlives the session means something.
    running = marked_processes(claude.marker).values()
    assert any(claude.bridge.argv[1] in cmdline for cmdline in running), f"no bridge carries the marker: {running}"

    # Blue; then prod before dev, the reverse of the declaration order.
    option(first, "Blue").click()
    expect(option(first, "Blue")).to_have_attribute("data-selected", "true")
    page.get_by_test_id("clarification-next").click()
    expect(second).to_have_attribute("data-kind", "multi")
    expect(second).to_contain_text(ENVS)
    option(second, "prod").click()
    option(second, "dev").click()
    expect(second.locator("[data-selected=true]")).to_have_count(2)
    expect(option(second, "staging")).to_have_attribute("data-selected", "false")
    page.get_by_test_id("clarification-submit").click()

    # The same turn ends after the model got the answer.
    sessions = page.get_by_test_id("task-sessions")
    expect(sessions).to_have_attribute("data-session-state", "WAITING_FOR_INPUT", timeout=AGENT_STEP_MS)
    expect(overlay).to_have_count(0)
    records = page.get_by_test_id("clarification-record")
    expect(records).to_have_count(2)
    for question_id in ("question_0", "question_1"):
        record = records.and_(page.locator(f"[data-question-id={question_id}]"))
        expect(record).to_have_attribute("data-status", "answered")
    agent = page.locator("[data-testid=timeline-message][data-author=agent]")
    expect(agent.filter(has_text=FINAL_TEXT)).to_have_count(1)
    expect(page.locator("[data-testid=timeline-message][data-author=user]")).to_have_count(1)

    # What the model received: exactly the operator's choices.
    assert [e.kind for e in claude.api.main_requests()] == ["ask", "after_tool_result"], claude.explain()
    (follow_up,) = claude.api.of_kind("after_tool_result")
    (block,) = [b for b in follow_up.tool_results() if b.get("tool_use_id") == ask.tool_use_id]
    result = tool_result_text(block)
    assert not block.get("is_error"), result
    assert ANSWER_PAIR.findall(result) == list(EXPECTED_ANSWERS.items()), result
    assert len(claude.api.issued) == 1, claude.explain()

    # Stopping the session ends agentctl, the bridge and the CLI.
    page.get_by_test_id("session-stop").click()
    expect(sessions).to_have_attribute("data-session-state", "CANCELLED")
    expect(sessions).to_have_attribute("data-agent-live", "false", timeout=AGENT_STEP_MS)
    leftovers = wait_until_gone(claude.marker)
    assert leftovers == {}, f"processes outlived the stopped session: {leftovers}"
    assert claude.proxy.attempts == [], "the run tried to leave the machine"
