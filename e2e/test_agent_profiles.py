"""A Claude Code profile added from its preset, checked, and run on a task of a registered repository (issue #14).

A staff operator opens the workspace's agent profiles from the board, starts
from the Claude Code preset (its command, agent id and ``ANTHROPIC_API_KEY``
filled in), points the command at the real bridge ``scripts/test`` installs
and fills in the offline environment of the real-bridge specs, API key
included. Checking the profile shows what the bridge answered to
``initialize``. The profile then runs on a task of a registered repository:
the scripted fake Messages API asks two questions with AskUserQuestion
(answered in the overlay), then writes a file with the CLI's Write tool
(allowed in the permission card); the task page shows that file's diff. The
API key's value is never in a page, an HTTP response, a socket frame or the
server's log.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from kandev_web.secret_box import looks_like_credential
from testing_support.bridge import find_bridge
from testing_support.bridge.ask_script import ENVS, NO_TOOL_TEXT, QUESTIONS, prompt
from testing_support.bridge.fake_messages_api import DenyingProxy, FakeMessagesApi, _blocks, _last_turn, _text
from testing_support.bridge.profiles import claude_bridge_environment, create_repository, kill_marked, wait_until_gone
from testing_support.browser import card, login, option

SERVER_ENV = {
    "KANDEV_FEATURES_ACP_ELICITATION": "true",
    "KANDEV_WORKTREE_ROOT": tempfile.mkdtemp(prefix="kandev-e2e-profiles-"),
}
BRIDGE_VERSION = "0.101.0"
MARKER = "KANDEV-E2E-PROFILE-PROBE"
NOTES = "# Release notes\n\nDeploying Blue to dev and prod.\n"
FINAL_TEXT = "Wrote NOTES.md: Blue, deploying to dev and prod."
#: The bridge starts, spawns the CLI and the fake answers: seconds, not the 5 s default.
AGENT_STEP_MS = 60_000


class AskThenWrite(FakeMessagesApi):
    """The ask script, then a Write of ``NOTES`` to ``write_path`` once the questions are answered."""

    WRITE_ID = "toolu_write01"

    def __init__(self) -> None:
        super().__init__(marker=MARKER, questions=QUESTIONS, final_text=FINAL_TEXT, no_tool_text=NO_TOOL_TEXT)
        self.write_path = ""

    def decide(self, body: Any) -> tuple[str, list[dict[str, Any]], str]:
        last = _last_turn(body)
        if last is not None and last.get("role") == "user":
            results = {b.get("tool_use_id") for b in _blocks(last) if b.get("type") == "tool_result"}
            tools = [tool.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)]
            with self._lock:
                asked = {ident for ident, given in self.issued.items() if "questions" in given}
                wrote = self.WRITE_ID in self.issued
            if wrote and self.WRITE_ID in results:
                return "after_write", [_text(self.final_text)], "end_turn"
            if results & asked and not wrote and "Write" in tools:
                given = {"file_path": self.write_path, "content": NOTES}
                with self._lock:
                    self.issued[self.WRITE_ID] = given
                return "write", [{"type": "tool_use", "id": self.WRITE_ID, "name": "Write", "input": given}], "tool_use"
        return super().decide(body)


@pytest.fixture
def claude(tmp_path):
    bridge = find_bridge(BRIDGE_VERSION)
    api = AskThenWrite()
    marker = uuid.uuid4().hex
    with DenyingProxy() as proxy, api:
        env = claude_bridge_environment(bridge, tmp_path / "claude", api=api, proxy=proxy, marker=marker)
        try:
            yield bridge, api, proxy, env, marker
        finally:
            kill_marked(marker)


class Wiretap:
    """Every HTTP response body and socket frame a browser context receives, to search for a secret."""

    def __init__(self, context) -> None:
        self.bodies: list[tuple[str, bytes]] = []
        self.frames: list[str] = []
        context.on("response", self._response)
        context.on("page", self._page)

    def _response(self, response) -> None:
        headers = json.dumps(response.headers)
        try:
            body = response.body()
        except PlaywrightError:  # a redirect has none
            body = b""
        self.bodies.append((response.url, headers.encode() + body))

    def _page(self, page) -> None:
        page.on("websocket", self._socket)

    def _socket(self, socket) -> None:
        for event in ("framereceived", "framesent"):
            socket.on(
                event, lambda payload: self.frames.append(payload if isinstance(payload, str) else payload.decode())
            )

    def find(self, secret: str) -> list[str]:
        found = [f"response {url}" for url, body in self.bodies if secret.encode() in body]
        return found + [f"frame {frame[:80]}" for frame in self.frames if secret in frame]


@pytest.mark.timeout(180)
def test_a_claude_code_profile_from_its_preset_is_checked_and_runs_on_a_repository(
    browser, server, claude, repository, fresh_database
):
    bridge, api, proxy, env, marker = claude
    secret = env["ANTHROPIC_API_KEY"]
    ids = server.create_operator("profiles-admin", workspace="Shop", staff=True)
    create_repository(server, workspace_id=ids["workspace_id"], path=repository)
    context = browser.new_context()
    tap = Wiretap(context)
    page = context.new_page()
    login(page, server, "profiles-admin", "/")

    # From the board's header to the workspace's profiles; the Claude Code preset fills the form.
    page.get_by_test_id("board-agent-profiles").click()
    expect(page.get_by_test_id("profiles-page")).to_have_attribute("data-workspace-id", str(ids["workspace_id"]))
    # Each preset says whether its agent can ask structured questions, and why, before anything runs.
    page.get_by_test_id("profile-preset").select_option("gemini")
    asks = page.get_by_test_id("profile-preset-questions")
    expect(asks).to_have_attribute("data-asks", "no")
    expect(asks).to_contain_text("Gemini CLI leaves its ask tool out in ACP mode")
    page.get_by_test_id("profile-preset").select_option("goose")
    expect(asks).to_have_attribute("data-asks", "mcp-only")
    page.get_by_test_id("profile-preset").select_option("claude-code")
    form = page.get_by_test_id("profile-form")
    expect(form).to_have_attribute("data-preset", "claude-code")
    expect(asks).to_have_attribute("data-asks", "yes")
    expect(asks).to_contain_text("It can ask you structured questions: The bridge asks Claude's AskUserQuestion")
    expect(page.get_by_test_id("profile-command")).to_have_value("npx -y @agentclientprotocol/claude-agent-acp")
    expect(page.get_by_test_id("profile-agent-id")).to_have_value("claude-acp")
    expect(page.get_by_test_id("profile-name")).to_have_value("Claude Code")
    # The preset's key is a secret to set, write-only; the environment is for the rest.
    key_row = page.locator("[data-testid=secret-env-row][data-secret-name=ANTHROPIC_API_KEY]")
    expect(key_row).to_have_attribute("data-secret-set", "false")
    expect(page.get_by_test_id("profile-env")).to_have_value("")

    # This machine runs the installed bridge offline: its command and the real-bridge specs' environment.
    page.get_by_test_id("profile-command").fill(shlex.join(bridge.argv))
    key_row.get_by_test_id("secret-env-replace").fill(secret)
    others = {name: value for name, value in env.items() if not looks_like_credential(name)}
    assert set(env) - set(others) == {"ANTHROPIC_API_KEY"}
    page.get_by_test_id("profile-env").fill("\n".join(f"{name}={value}" for name, value in others.items()))
    page.get_by_test_id("profile-save").click()

    profile = page.get_by_test_id("profile-card").filter(
        has=page.get_by_test_id("profile-card-agent-id").filter(has_text="claude-acp")
    )
    expect(profile).to_have_count(1)
    expect(profile.get_by_test_id("profile-card-name")).to_have_text("Claude Code")
    expect(profile.get_by_test_id("profile-check-never")).to_be_visible()

    # Check: the bridge's answer to initialize, in sentences.
    profile.get_by_test_id("profile-check").click()
    result = profile.get_by_test_id("profile-check-result")
    expect(result).to_have_attribute("data-checked", "true", timeout=AGENT_STEP_MS)
    expect(result).to_have_attribute("data-ok", "true")
    fact = lambda key: result.locator(f"[data-testid=profile-check-fact][data-fact={key}]")  # noqa: E731
    expect(fact("agent")).to_have_text(f"Claude Agent {BRIDGE_VERSION} answered on this machine.")
    expect(fact("protocol")).to_have_text("It speaks ACP protocol version 1.")
    expect(fact("mcp")).to_contain_text("Kandev's MCP server reaches it over HTTP.")
    expect(fact("prompt")).to_contain_text("images")
    expect(fact("auth")).to_be_visible()
    expect(fact("needs")).to_contain_text("It has what kandev needs")
    expect(fact("questions")).to_have_attribute("data-asks", "yes")
    expect(fact("questions")).to_contain_text("It can ask you structured questions")

    # A task on the registered repository, and the profile started on it.
    page.get_by_test_id("nav-home").click()
    page.get_by_test_id("task-form-title").fill("Release notes")
    page.get_by_test_id("task-form-repository").select_option(label="shop")
    page.get_by_test_id("task-create-submit").click()
    page.get_by_test_id("task-card-title").filter(has_text="Release notes").click()
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    task_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    worktree = Path(SERVER_ENV["KANDEV_WORKTREE_ROOT"]) / f"task-{task_id}"
    api.write_path = str(worktree / "NOTES.md")
    page.get_by_test_id("session-start-profile").select_option(label="Claude Code")
    page.get_by_test_id("session-start-prompt").fill(prompt(MARKER))
    page.get_by_test_id("session-start-submit").click()

    # AskUserQuestion, answered in the overlay.
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "elicitation", timeout=AGENT_STEP_MS)
    first, second = card(page, "question_0"), card(page, "question_1")
    option(first, "Blue").click()
    page.get_by_test_id("clarification-next").click()
    expect(second).to_contain_text(ENVS)
    option(second, "dev").click()
    option(second, "prod").click()
    page.get_by_test_id("clarification-submit").click()
    expect(overlay).to_have_count(0)

    # The model writes NOTES.md with the CLI's Write tool; the operator allows it once.
    permission = page.get_by_test_id("permission-card")
    expect(permission).to_have_attribute("data-status", "pending", timeout=AGENT_STEP_MS)
    permission.locator("[data-testid=permission-option][data-kind=allow_once]").click()

    sessions = page.get_by_test_id("task-sessions")
    expect(sessions).to_have_attribute("data-session-state", "WAITING_FOR_INPUT", timeout=AGENT_STEP_MS)
    agent = page.locator("[data-testid=timeline-message][data-author=agent]")
    expect(agent.filter(has_text=FINAL_TEXT)).to_have_count(1)
    assert [e.kind for e in api.of_kind("ask", "write", "after_write")] == ["ask", "write", "after_write"], "\n".join(
        api.summary()
    )
    assert (worktree / "NOTES.md").read_text() == NOTES
    assert not (repository / "NOTES.md").exists()

    # The written file's diff against the base, on the task page.
    changes = page.get_by_test_id("worktree-changes").last
    expect(changes.get_by_test_id("changed-file")).to_have_text(["NOTES.md"])
    diff = changes.get_by_test_id("worktree-diff")
    expect(diff).to_have_attribute("data-path", "NOTES.md")
    expect(diff.locator("[data-testid=diff-line][data-kind=add]")).to_have_text(
        ["+# Release notes", "+", "+Deploying Blue to dev and prod."]
    )

    page.get_by_test_id("session-stop").click()
    expect(sessions).to_have_attribute("data-agent-live", "false", timeout=AGENT_STEP_MS)
    assert wait_until_gone(marker) == {}
    assert proxy.attempts == [], "the run tried to leave the machine"

    # The key went in once, typed into the form; nothing ever gave it back.
    for path in (f"/settings/workspaces/{ids['workspace_id']}/agents/", f"/tasks/{task_id}/"):
        page.goto(f"{server.url}{path}")
        assert secret not in page.content(), path
    # The tap hears what the pages got (the check's answer, the diff over the socket), and never the key.
    assert any(b"answered on this machine" in body for _, body in tap.bodies)
    assert any("Deploying Blue to dev and prod." in frame for frame in tap.frames)
    assert tap.find(secret) == []
    log = (fresh_database.parent / "server.log").read_text(errors="replace")
    assert secret not in log
    assert json.dumps(secret)[1:-1] not in log
