"""A Codex profile from its preset, signed in through a model gateway, its question answered in the overlay.

A workspace admin starts from the Codex preset, points the command at the
real ``@agentclientprotocol/codex-acp`` that ``scripts/test`` installs, fills
in the offline environment of ``tests/codex``, the model gateway URL (the
scripted fake Responses API in this test process), its headers as the
write-only secret ``KANDEV_GATEWAY_HEADERS``, and ``collaboration_mode=plan``.
Check shows that Codex offered the gateway sign-in. The profile then runs on
a task of a registered repository: the model asks with ``request_user_input``;
the operator picks Red and adds a note in the overlay; the model reads both in
the same turn.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import uuid

import pytest
from playwright.sync_api import expect

from kandev_web.agents.models import GATEWAY_HEADERS_SECRET
from testing_support.agent_runs import kill_marked, wait_until_gone
from testing_support.bridge.profiles import create_repository
from testing_support.browser import card, login, option
from testing_support.codex import find_codex
from testing_support.codex.fake_responses_api import Call, FakeResponsesApi
from testing_support.codex.harness import offline_environment
from testing_support.fake_model_server import DenyingProxy

SERVER_ENV = {
    "KANDEV_FEATURES_ACP_ELICITATION": "true",
    "KANDEV_WORKTREE_ROOT": tempfile.mkdtemp(prefix="kandev-e2e-codex-"),
}
MARKER = "KANDEV-E2E-CODEX-PROBE"
QUESTION = "Which colour should I use?"
ASK = Call(
    "request_user_input",
    {
        "questions": [
            {
                "id": "colour",
                "header": "Colour",
                "question": QUESTION,
                "options": [
                    {"label": "Red", "description": "The warm one."},
                    {"label": "Blue", "description": "The cool one."},
                ],
            }
        ]
    },
)
FINAL_TEXT = "Red it is, warmly."
HEADER = "kandev-e2e-gateway-header-0123456789"
#: Codex starts its app-server and the fake answers: seconds, not the 5 s default.
AGENT_STEP_MS = 60_000


@pytest.fixture
def codex(tmp_path):
    """The installed adapter, the fake API, a denying proxy, and the profile's environment; nothing left after."""
    installed = find_codex()
    api = FakeResponsesApi(marker=MARKER, call=ASK, final_text=FINAL_TEXT)
    marker = uuid.uuid4().hex
    with DenyingProxy() as proxy, api:
        env = offline_environment(installed, tmp_path, proxy=proxy, marker=marker)
        try:
            yield installed, api, proxy, env, marker
        finally:
            kill_marked(marker)


@pytest.mark.timeout(180)
def test_a_codex_profile_from_its_preset_asks_through_the_gateway_and_the_model_reads_pick_and_note(
    browser, server, codex, repository
):
    installed, api, proxy, env, marker = codex
    ids = server.create_operator("codex-admin", workspace="Shop", staff=True)
    create_repository(server, workspace_id=ids["workspace_id"], path=repository)
    page = browser.new_context().new_page()
    login(page, server, "codex-admin", "/")

    # The Codex preset fills the form; this machine runs the installed adapter offline, through the gateway.
    page.get_by_test_id("board-agent-profiles").click()
    page.get_by_test_id("profile-preset").select_option("codex")
    expect(page.get_by_test_id("profile-form")).to_have_attribute("data-preset", "codex")
    expect(page.get_by_test_id("profile-command")).to_have_value("npx -y @agentclientprotocol/codex-acp@2.6.0")
    expect(page.get_by_test_id("profile-agent-id")).to_have_value("codex-acp")
    expect(page.get_by_test_id("profile-preset-hint")).to_contain_text("collaboration_mode=plan")
    page.get_by_test_id("profile-command").fill(shlex.join(installed.argv))
    page.get_by_test_id("profile-env").fill("\n".join(f"{name}={value}" for name, value in env.items()))
    page.get_by_test_id("profile-gateway-base-url").fill(api.base_url)
    page.get_by_test_id("profile-config-options").fill("collaboration_mode=plan")
    page.locator("[data-testid=secret-env-new-name]").last.fill(GATEWAY_HEADERS_SECRET)
    page.locator("[data-testid=secret-env-new-value]").last.fill(json.dumps({"X-Kandev-Gateway": HEADER}))
    page.get_by_test_id("profile-save").click()

    profile = page.get_by_test_id("profile-card").filter(
        has=page.get_by_test_id("profile-card-agent-id").filter(has_text="codex-acp")
    )
    expect(profile).to_have_count(1)

    # Check: Codex answered and, asked for it, offered the gateway sign-in.
    profile.get_by_test_id("profile-check").click()
    result = profile.get_by_test_id("profile-check-result")
    expect(result).to_have_attribute("data-checked", "true", timeout=AGENT_STEP_MS)
    expect(result).to_have_attribute("data-ok", "true")
    fact = lambda key: result.locator(f"[data-testid=profile-check-fact][data-fact={key}]")  # noqa: E731
    expect(fact("agent")).to_have_text("Codex 2.6.0 answered on this machine.")
    expect(fact("auth")).to_contain_text("Custom model gateway (gateway, needs nobody)")

    # A task on the registered repository, and the profile started on it.
    page.get_by_test_id("nav-home").click()
    page.get_by_test_id("task-form-title").fill("Paint the shop")
    page.get_by_test_id("task-form-repository").select_option(label="shop")
    page.get_by_test_id("task-create-submit").click()
    page.get_by_test_id("task-card-title").filter(has_text="Paint the shop").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    page.get_by_test_id("session-start-profile").select_option(label="Codex")
    page.get_by_test_id("session-start-prompt").fill(f"{MARKER}: which colour?")
    page.get_by_test_id("session-start-submit").click()

    # One question: the pick, with Codex's note as its free text.
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "elicitation", timeout=AGENT_STEP_MS)
    expect(page.get_by_test_id("clarification-question-card")).to_have_count(1)
    colour = card(page, "colour")
    expect(colour.get_by_test_id("clarification-prompt")).to_have_text(QUESTION)
    expect(colour).to_have_attribute("data-note", "true")
    option(colour, "Red").click()
    colour.get_by_test_id("clarification-input").fill("because it is warm")
    expect(option(colour, "Red")).to_have_attribute("data-selected", "true")
    page.get_by_test_id("clarification-submit").click()
    expect(overlay).to_have_count(0)

    sessions = page.get_by_test_id("task-sessions")
    expect(sessions).to_have_attribute("data-session-state", "WAITING_FOR_INPUT", timeout=AGENT_STEP_MS)
    agent = page.locator("[data-testid=timeline-message][data-author=agent]")
    expect(agent.filter(has_text=FINAL_TEXT)).to_have_count(1)

    # What the model read, in the same turn; the gateway's header reached it.
    assert api.outputs_received() == ['{"answers":{"colour":{"answers":["Red","user_note: because it is warm"]}}}'], (
        "\n".join(api.summary())
    )
    (call,) = api.of_kind("call")
    assert call.headers.get("x-kandev-gateway") == HEADER

    page.get_by_test_id("session-stop").click()
    expect(sessions).to_have_attribute("data-agent-live", "false", timeout=AGENT_STEP_MS)
    assert wait_until_gone(marker) == {}
    assert proxy.attempts == [], "the run tried to leave the machine"
    # The header's value went in once, typed into the form; no page gives it back.
    page.goto(f"{server.url}/settings/workspaces/{ids['workspace_id']}/agents/")
    assert HEADER not in page.content()
