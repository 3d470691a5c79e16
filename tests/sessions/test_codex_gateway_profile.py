"""A profile's model gateway (Codex's ``gateway`` sign-in) and its config options at session start.

The page stores the gateway URL (http or https only), its headers as a
write-only secret (a JSON object), and ``option=value`` lines; the runner asks
agentctl for the gateway sign-in only for such a profile, so every other
profile's ``agent.initialize`` stays as it was.
"""

import json

import pytest

from kandev_web.agents.models import GATEWAY_HEADERS_SECRET, AgentProfile, secret_box
from kandev_web.sessions.launching import LaunchPlan, auth_gateway_fields, session_payload

HEADERS = {"Authorization": "Bearer gw-secret-0123456789"}


def url(workspace, rest=""):
    return f"/settings/workspaces/{workspace.pk}/agents/{rest}"


def form(**fields):
    return {
        "name": "Codex",
        "agent_id": "codex-acp",
        "command": "npx -y @agentclientprotocol/codex-acp@2.6.0",
        "env": "",
        "working_dir": "",
        "auth_method": "",
        "gateway_base_url": "https://llm.example.com/v1",
        "config_options": "collaboration_mode=plan",
        "executor": "",
        **fields,
    }


def test_a_gateway_profile_stores_its_url_options_and_sealed_headers(staff_client, workspace):
    response = staff_client.post(
        url(workspace, "new/"),
        form(**{"secrets-new-0-name": GATEWAY_HEADERS_SECRET, "secrets-new-0-value": json.dumps(HEADERS)}),
    )
    assert response.status_code == 302, response.text
    profile = AgentProfile.objects.get(name="Codex")
    assert profile.gateway_base_url == "https://llm.example.com/v1"
    assert profile.config_options == {"collaboration_mode": "plan"}
    assert "gw-secret" not in str(profile.secret_env)
    sealed = profile.secret_env[GATEWAY_HEADERS_SECRET]
    assert json.loads(secret_box().open(GATEWAY_HEADERS_SECRET, sealed)) == HEADERS
    assert "gw-secret" not in staff_client.get(url(workspace, f"{profile.pk}/edit/")).text


@pytest.mark.parametrize("bad", ["ftp://llm.example.com/v1", "javascript:alert(1)", "llm.example.com/v1", "https://"])
def test_a_gateway_url_that_is_not_http_or_https_is_refused(staff_client, workspace, bad):
    response = staff_client.post(url(workspace, "new/"), form(gateway_base_url=bad))
    assert response.status_code == 200
    assert "Give the gateway&#x27;s base URL with http:// or https://" in response.text
    assert not AgentProfile.objects.filter(name="Codex").exists()


def test_gateway_headers_that_are_not_a_json_object_are_refused(staff_client, workspace):
    response = staff_client.post(
        url(workspace, "new/"),
        form(**{"secrets-new-0-name": GATEWAY_HEADERS_SECRET, "secrets-new-0-value": "Authorization: Bearer x"}),
    )
    assert response.status_code == 200
    assert f"{GATEWAY_HEADERS_SECRET} is a JSON object of header names to values" in response.text
    assert not AgentProfile.objects.filter(name="Codex").exists()


def test_a_config_option_line_without_equals_is_refused(staff_client, workspace):
    response = staff_client.post(url(workspace, "new/"), form(config_options="collaboration_mode plan"))
    assert response.status_code == 200
    assert "Line 1 is not option=value" in response.text


def plan(**fields) -> LaunchPlan:
    base = dict(
        task_id=1,
        session_id=2,
        execution_id=3,
        agent_id="codex-acp",
        argv=["codex-acp"],
        env={},
        workdir="",
        runtime_flags={"features.acpElicitation": True},
        mcp_servers=[],
    )
    return LaunchPlan(**(base | fields))


def test_without_a_gateway_agentctl_is_asked_exactly_as_before():
    assert auth_gateway_fields(plan()) == {}
    assert session_payload(plan(), "/w") == {"cwd": "/w", "mcp_servers": []}


def test_a_gateway_profile_asks_for_the_gateway_sign_in_and_its_options():
    gateway = plan(gateway_base_url="http://127.0.0.1:9/v1", config_options={"collaboration_mode": "plan"})
    assert auth_gateway_fields(gateway) == {"auth_gateway": True}
    assert session_payload(gateway, "/w") == {
        "cwd": "/w",
        "mcp_servers": [],
        "auth_method": "gateway",
        "gateway": {"base_url": "http://127.0.0.1:9/v1", "provider_name": "kandev"},
        "config_options": {"collaboration_mode": "plan"},
    }
    # A method the operator chose wins.
    assert session_payload(plan(gateway_base_url="https://x.test/v1", auth_method="api-key"), "/w")["auth_method"] == (
        "api-key"
    )
