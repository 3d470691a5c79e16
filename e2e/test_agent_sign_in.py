"""An agent that requires ACP sign-in, started from the task page.

The profile's command is the scripted ACP agent of ``testing_support/scripted_agent.py``: with
the profile's ``auth_method`` and its key in the profile's environment the
session opens and the agent answers; with only a browser login on offer the
session fails and the operator reads what to run where, not JSON.
"""

import json
import socket
import sys
from pathlib import Path

from playwright.sync_api import expect

from testing_support.agents import SCRIPTED_AGENT
from testing_support.browser import fresh_task, start_agent

SET_PROFILE = """
from kandev_web.agents.models import AgentProfile
AgentProfile.objects.filter(workspace_id={workspace}).update(command={command!r}, env={env!r}, auth_method={method!r})
"""

GOOGLE = {"id": "oauth-personal", "name": "Log in with Google"}
API_KEY = {"id": "api-key", "name": "Use an API key", "type": "env_var", "vars": [{"name": "SCRIPTED_API_KEY"}]}


def _initialized(methods):
    agent_info = {"name": "scripted", "title": "Scripted agent"}
    return [
        {"expect": "initialize"},
        {"reply": {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": agent_info, "authMethods": methods}},
    ]


def _profile(server, ids, tmp_path: Path, steps, *, env=None, method="") -> list[str]:
    """Point the operator's profile at the scripted agent playing ``steps``; its command."""
    script, record = tmp_path / "script.json", tmp_path / "record.jsonl"
    script.write_text(json.dumps(steps))
    command = [sys.executable, str(SCRIPTED_AGENT), str(script), str(record)]
    code = SET_PROFILE.format(workspace=ids["workspace_id"], command=command, env=env or {}, method=method)
    server.manage("shell", "-c", code)
    return command


def test_the_profiles_auth_method_signs_the_agent_in_and_the_session_runs(browser, server, tmp_path):
    page, ids = fresh_task(browser, server, "sign-in-key")
    steps = [
        *_initialized([GOOGLE, API_KEY]),
        {"expect": "authenticate"},
        {"reply": {}},
        {"expect": "session/new"},
        {"reply": {"sessionId": "sess-1"}},
        {"expect": "session/prompt"},
        {
            "send": {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "sess-1",
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "Signed in."},
                    },
                },
            }
        },
        {"reply": {"stopReason": "end_turn"}},
    ]
    _profile(server, ids, tmp_path, steps, env={"SCRIPTED_API_KEY": "sk-test"}, method="api-key")

    start_agent(page, "hello")

    expect(page.get_by_test_id("timeline-message").filter(has_text="Signed in.")).to_have_count(1)
    authenticate = [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()[1:]]
    assert [frame["params"] for frame in authenticate if frame.get("method") == "authenticate"] == [
        {"methodId": "api-key"}
    ]


def test_a_browser_login_fails_the_session_with_what_to_run_where(browser, server, tmp_path):
    page, ids = fresh_task(browser, server, "sign-in-browser")
    steps = [
        *_initialized([GOOGLE]),
        {"expect": "session/new"},
        {"reply_error": {"code": -32000, "message": "Authentication required"}},
    ]
    command = _profile(server, ids, tmp_path, steps)

    start_agent(page, "hello")

    failure = page.get_by_test_id("session-error").first
    expect(failure).to_contain_text(
        "Scripted agent needs someone to sign in with “Log in with Google”, which Kandev cannot do for it: "
        f"on {socket.gethostname()}, as the user that runs its agents, run `{command[0]}` in a terminal and sign in, "
        "then start the session again."
    )
    expect(failure).not_to_contain_text("{")
    expect(failure).not_to_contain_text("-32000")
