"""Checking a profile over a real agentctl: the mock agent answers; a missing, failing or silent command says why.

Each check goes through the page's check action (an async view), which
starts agentctl for the profile's command, asks ``agent.initialize`` and stops
it; the test reads what the page then says and what was stored.
"""

import subprocess
import sys
import time
from html import unescape
from pathlib import Path

import psutil

from kandev_web.agents.models import AgentProfile, Executor
from testing_support.agents import ScriptedAgent
from testing_support.executor import ssh_test_host_fields, unreachable_ssh_host

MOCK_AGENT = str(Path(sys.executable).parent / "kandev-mock-agent")
HTMX = {"HTTP_HX_REQUEST": "true"}


def check(client, workspace, command: list[str]) -> tuple[AgentProfile, str]:
    profile = AgentProfile.objects.create(workspace=workspace, name="Agent", agent_id="mock", command=command)
    response = client.post(f"/settings/workspaces/{workspace.pk}/agents/{profile.pk}/check/", **HTMX)
    assert response.status_code == 200
    profile.refresh_from_db()
    return profile, response.text


def agents_left(marker: str) -> list[psutil.Process]:
    """Processes still running whose command line carries ``marker`` (the check must stop what it started)."""
    deadline = time.monotonic() + 10
    while True:
        left = [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)  # polling the process table


def test_the_mock_agent_answers_and_the_page_says_what_it_offers(staff_client, workspace):
    profile, html = check(staff_client, workspace, [MOCK_AGENT])
    assert profile.last_check["outcome"] == "ok"
    assert profile.checked_at is not None
    assert 'data-ok="true"' in html
    assert "Kandev mock agent 1 answered on this machine." in html
    assert "It speaks ACP protocol version 1." in html
    assert "It takes MCP servers over stdio and HTTP, not SSE. Kandev&#x27;s MCP server reaches it over HTTP." in html
    assert "Its prompts take text and resource links only." in html


def test_an_agent_without_http_mcp_is_said_to_be_reached_over_stdio(staff_client, workspace):
    _, html = check(staff_client, workspace, [MOCK_AGENT, "--no-mcp-http"])
    assert "It takes MCP servers over stdio only, not HTTP or SSE." in html
    assert "through kandev-mcp-stdio" in html


def test_a_command_that_does_not_exist_is_not_found(staff_client, workspace):
    profile, html = check(staff_client, workspace, ["/nonexistent/kandev-agent", "acp"])
    assert profile.last_check["outcome"] == "cannot_start"
    assert "Command not found on this machine: /nonexistent/kandev-agent acp." in html
    assert 'data-ok="false"' in html


def test_a_command_that_exits_shows_its_exit_code_and_stderr_escaped(staff_client, workspace):
    script = "echo 'Error: <b>ANTHROPIC_API_KEY</b> is not set' >&2; exit 3"
    profile, html = check(staff_client, workspace, ["sh", "-c", script])
    assert profile.last_check["outcome"] == "exited"
    assert "The agent exited with exit code 3 before it answered initialize." in html
    assert "Error: &lt;b&gt;ANTHROPIC_API_KEY&lt;/b&gt; is not set" in html
    assert "<b>ANTHROPIC_API_KEY" not in html


def test_a_command_that_never_answers_times_out_and_is_stopped(staff_client, workspace, settings):
    settings.KANDEV_PROFILE_CHECK_TIMEOUT_SECONDS = 2.0
    marker = "kandev-check-hangs-7c1f"
    started = time.monotonic()
    command = [sys.executable, "-c", "import time; time.sleep(600)", marker]
    profile, html = check(staff_client, workspace, command)
    assert time.monotonic() - started < 2.0 + 15  # the timeout, then stopping agentctl and the agent
    assert profile.last_check == {
        "host": "this machine",
        "command": f"{sys.executable} -c 'import time; time.sleep(600)' {marker}",
        "outcome": "timed_out",
        "seconds": 2.0,
    }
    assert "The agent did not answer initialize within 2 seconds." in html
    assert agents_left(marker) == []  # agentctl stopped the agent it started


def ssh_executor(name: str, **changes) -> Executor:
    """An executor on the real sshd scripts/test runs."""
    return Executor.objects.create(name=name, **ssh_test_host_fields(**changes))


def test_a_profile_on_an_ssh_executor_is_checked_there(staff_client, workspace):
    executor = ssh_executor("gpu-ssh")
    profile = AgentProfile.objects.create(
        workspace=workspace, name="Remote", agent_id="mock", command=[MOCK_AGENT], executor=executor
    )
    response = staff_client.post(f"/settings/workspaces/{workspace.pk}/agents/{profile.pk}/check/", **HTMX)
    assert "Kandev mock agent 1 answered on gpu-ssh." in response.text
    missing = AgentProfile.objects.create(
        workspace=workspace, name="Missing", agent_id="x", command=["/nonexistent/agent"], executor=executor
    )
    response = staff_client.post(f"/settings/workspaces/{workspace.pk}/agents/{missing.pk}/check/", **HTMX)
    assert "Command not found on gpu-ssh: /nonexistent/agent." in response.text


def test_an_ssh_executor_showing_another_host_key_is_said_to_be_unreachable_and_why(staff_client, workspace, tmp_path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    executor = ssh_executor("impostor", host_key=(tmp_path / "other.pub").read_text())
    profile = AgentProfile.objects.create(
        workspace=workspace, name="Remote", agent_id="mock", command=[MOCK_AGENT], executor=executor
    )
    response = staff_client.post(f"/settings/workspaces/{workspace.pk}/agents/{profile.pk}/check/", **HTMX)
    profile.refresh_from_db()
    assert profile.last_check["outcome"] == "unreachable"
    assert "showed another host key than the one recorded" in unescape(response.text)


def test_an_executor_that_is_not_there_is_said_to_be_unreachable(staff_client, workspace, settings):
    settings.KANDEV_PROFILE_CHECK_TIMEOUT_SECONDS = 5.0
    executor = Executor.objects.create(name="gone-1", **unreachable_ssh_host())
    profile = AgentProfile.objects.create(
        workspace=workspace, name="Remote", agent_id="mock", command=[MOCK_AGENT], executor=executor
    )
    response = staff_client.post(f"/settings/workspaces/{workspace.pk}/agents/{profile.pk}/check/", **HTMX)
    profile.refresh_from_db()
    assert profile.last_check["outcome"] == "unreachable"
    assert "agentctl could not be started on gone-1:" in response.text


def test_an_agent_that_refuses_initialize_is_quoted(staff_client, workspace, tmp_path):
    steps = [{"expect": "initialize"}, {"reply_error": {"code": -32000, "message": "Authentication required"}}]
    profile, html = check(staff_client, workspace, ScriptedAgent(tmp_path).argv(steps, handshake=False))
    assert profile.last_check["outcome"] == "refused"
    assert "The agent refused initialize: Authentication required." in html


def test_the_methods_a_check_found_are_said_and_offered_for_the_profile(staff_client, workspace, tmp_path):
    answer = {
        "protocolVersion": 1,
        "agentInfo": {"name": "gemini-cli", "version": "0.9.0"},
        "agentCapabilities": {"promptCapabilities": {"image": True, "audio": True}},
        "authMethods": [
            {"id": "oauth-personal", "name": "Log in with Google", "description": None},
            {
                "id": "gemini-api-key",
                "name": "Use Gemini API key",
                "type": "env_var",
                "vars": [{"name": "GEMINI_API_KEY"}],
            },
        ],
    }
    argv = ScriptedAgent(tmp_path).argv([{"expect": "initialize"}, {"reply": answer}], handshake=False)
    profile, html = check(staff_client, workspace, argv)
    assert "gemini-cli 0.9.0 answered on this machine." in html
    assert "Its prompts also take images, audio." in html
    assert (
        "It offers these sign-in methods: Log in with Google (oauth-personal, needs a person to sign in); "
        "Use Gemini API key (gemini-api-key, needs GEMINI_API_KEY set)."
    ) in html
    edit = staff_client.get(f"/settings/workspaces/{workspace.pk}/agents/{profile.pk}/edit/").text
    assert '<option value="gemini-api-key">Use Gemini API key (gemini-api-key)</option>' in edit
