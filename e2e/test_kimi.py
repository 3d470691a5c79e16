"""A Kimi Code profile added from its preset, checked, and run on a task of a registered repository (issue #28).

A workspace admin starts from the Kimi Code preset (its command, agent id, and
the sentence that Kimi can ask structured questions), points the command at
the real Kimi Code ``scripts/test`` installs with the node 22 it needs, and
fills in tests/kimi's offline environment (its ``config.toml`` points the
model at a scripted fake Chat Completions API in this test process). Check
shows what Kimi answered to ``initialize``, what kandev needs, and that it can
ask. On a task of a registered repository the fake model calls
AskUserQuestion with two questions; the operator answers both in the overlay;
the fake records the tool result the model got: the answers keyed by question
text, the multi-select joined in declared order.
"""

from __future__ import annotations

import shlex
import tempfile
import uuid

import pytest
from playwright.sync_api import expect

from testing_support.agent_runs import kill_marked, wait_until_gone
from testing_support.bridge.profiles import create_repository
from testing_support.browser import card, login, option
from testing_support.fake_model_server import DenyingProxy
from testing_support.kimi import VERSION, find_kimi
from testing_support.kimi.ask_script import COLOUR, ENVS, FINAL_TEXT, fake_api, prompt
from testing_support.kimi.harness import kimi_environment

SERVER_ENV = {
    "KANDEV_FEATURES_ACP_ELICITATION": "true",
    "KANDEV_WORKTREE_ROOT": tempfile.mkdtemp(prefix="kandev-e2e-kimi-"),
}
MARKER = "KANDEV-E2E-KIMI-PROBE"
#: Kimi starts (about a second cold) and the fake answers: seconds, not the 5 s default.
AGENT_STEP_MS = 60_000


@pytest.fixture
def kimi(tmp_path):
    installed = find_kimi()
    api = fake_api(MARKER)
    marker = uuid.uuid4().hex
    with DenyingProxy() as proxy, api:
        env = kimi_environment(installed, tmp_path / "kimi", api=api, proxy=proxy, marker=marker)
        try:
            yield installed, api, proxy, env, marker
        finally:
            kill_marked(marker)


@pytest.mark.timeout(180)
def test_a_kimi_profile_from_its_preset_is_checked_and_its_question_answered_in_the_overlay(
    browser, server, kimi, repository
):
    installed, api, proxy, env, marker = kimi
    ids = server.create_operator("kimi-admin", workspace="Shop", staff=True)
    create_repository(server, workspace_id=ids["workspace_id"], path=repository)
    page = browser.new_page()
    login(page, server, "kimi-admin", f"/settings/workspaces/{ids['workspace_id']}/agents/")

    # The Kimi Code preset: its command, its id, and before anything runs, that it can ask.
    page.get_by_test_id("profile-preset").select_option("kimi-code")
    expect(page.get_by_test_id("profile-form")).to_have_attribute("data-preset", "kimi-code")
    expect(page.get_by_test_id("profile-command")).to_have_value(f"npx -y @moonshot-ai/kimi-code@{VERSION} acp")
    expect(page.get_by_test_id("profile-agent-id")).to_have_value("kimi")
    expect(page.get_by_test_id("profile-preset-hint")).to_contain_text("Node.js 22.19")
    asks = page.get_by_test_id("profile-preset-questions")
    expect(asks).to_have_attribute("data-asks", "yes")
    expect(asks).to_have_text(
        "It can ask you structured questions: Kimi Code asks all of an AskUserQuestion call's questions in one form."
    )

    # This machine runs the installed Kimi with node 22, offline.
    page.get_by_test_id("profile-command").fill(shlex.join(installed.argv))
    page.get_by_test_id("profile-env").fill("\n".join(f"{name}={value}" for name, value in env.items()))
    page.get_by_test_id("profile-save").click()
    profile = page.get_by_test_id("profile-card").filter(
        has=page.get_by_test_id("profile-card-agent-id").filter(has_text="kimi")
    )
    expect(profile.get_by_test_id("profile-card-name")).to_have_text("Kimi Code")

    # Check: Kimi's answer to initialize, what kandev needs, and whether it can ask.
    profile.get_by_test_id("profile-check").click()
    result = profile.get_by_test_id("profile-check-result")
    expect(result).to_have_attribute("data-checked", "true", timeout=AGENT_STEP_MS)
    expect(result).to_have_attribute("data-ok", "true")
    fact = lambda key: result.locator(f"[data-testid=profile-check-fact][data-fact={key}]")  # noqa: E731
    expect(fact("agent")).to_have_text(f"Kimi Code CLI {VERSION} answered on this machine.")
    expect(fact("protocol")).to_have_text("It speaks ACP protocol version 1.")
    expect(fact("needs")).to_have_text("It has what kandev needs, taking up a session again with session/resume.")
    expect(fact("questions")).to_have_attribute("data-asks", "yes")
    expect(fact("questions")).to_contain_text("It can ask you structured questions")
    assert wait_until_gone(marker) == {}, "the check left Kimi running"

    # A task on the registered repository, the Kimi profile started on it.
    page.get_by_test_id("nav-home").click()
    page.get_by_test_id("task-form-title").fill("Pick colours")
    page.get_by_test_id("task-form-repository").select_option(label="shop")
    page.get_by_test_id("task-create-submit").click()
    page.get_by_test_id("task-card-title").filter(has_text="Pick colours").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    page.get_by_test_id("session-start-profile").select_option(label="Kimi Code")
    page.get_by_test_id("session-start-prompt").fill(prompt(MARKER))
    page.get_by_test_id("session-start-submit").click()

    # Both questions in one overlay, each prompted by its own question, titled by its header.
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "elicitation", timeout=AGENT_STEP_MS)
    first, second = card(page, "q0"), card(page, "q1")
    expect(first).to_contain_text(COLOUR)
    expect(first).not_to_contain_text(ENVS)
    option(first, "Red").click()
    page.get_by_test_id("clarification-next").click()
    expect(second).to_contain_text(ENVS)
    option(second, "Green").click()
    option(second, "Red").click()
    page.get_by_test_id("clarification-submit").click()
    expect(overlay).to_have_count(0)

    # The same turn ends; the model read the answers by question text.
    sessions = page.get_by_test_id("task-sessions")
    expect(sessions).to_have_attribute("data-session-state", "WAITING_FOR_INPUT", timeout=AGENT_STEP_MS)
    agent = page.locator("[data-testid=timeline-message][data-author=agent]")
    expect(agent.filter(has_text=FINAL_TEXT)).to_have_count(1)
    assert api.answers() == [{"answers": {COLOUR: "Red", ENVS: "Red, Green"}}], "\n".join(api.summary())

    page.get_by_test_id("session-stop").click()
    expect(sessions).to_have_attribute("data-agent-live", "false", timeout=AGENT_STEP_MS)
    assert wait_until_gone(marker) == {}
    assert proxy.attempts == [], "the run tried to leave the machine"
