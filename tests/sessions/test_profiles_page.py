"""The workspace's agent profiles page: who reaches it, adding from a preset, editing, removing, and the secret kept."""

import re

import pytest
from django.test import Client

from kandev_web import limits
from kandev_web.agents.models import AgentProfile, secret_box
from kandev_web.board.models import Workspace
from kandev_web.sessions.models import SessionState, TaskSession

SECRET = "sk-ant-api03-never-shown-again-0123456789"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def profile(workspace):
    profile = AgentProfile(
        workspace=workspace,
        name="Claude",
        agent_id="claude-acp",
        command=["npx", "-y", "@agentclientprotocol/claude-agent-acp"],
        env={"DISABLE_TELEMETRY": "1"},
    )
    profile.set_secret("ANTHROPIC_API_KEY", SECRET)
    profile.save()
    return profile


def url(workspace, rest=""):
    return f"/settings/workspaces/{workspace.pk}/agents/{rest}"


def test_login_is_required(db, workspace):
    response = Client().get(url(workspace))
    assert response.status_code == 302
    assert response.url.startswith("/login/")


def test_only_admins_of_the_workspace_reach_it(staff_client, make_operator, workspace, profile):
    member = Client()
    member.force_login(make_operator("bob", workspace=workspace))
    assert member.get(url(workspace)).status_code == 403
    assert member.post(url(workspace, f"{profile.pk}/check/")).status_code == 403
    assert member.post(url(workspace, f"{profile.pk}/delete/")).status_code == 403
    other = Workspace.objects.create(name="Theirs")
    assert staff_client.get(url(other)).status_code == 404
    assert staff_client.post(url(other, f"{profile.pk}/delete/")).status_code == 404
    assert AgentProfile.objects.filter(pk=profile.pk).exists()


def test_the_board_links_the_workspace_admins_to_the_page(staff_client, make_operator, workspace, board):
    assert (
        f'href="{url(workspace)}" data-testid="board-agent-profiles"' in staff_client.get(f"/boards/{board.pk}/").text
    )
    member = Client()
    member.force_login(make_operator("bob", workspace=workspace))
    assert "board-agent-profiles" not in member.get(f"/boards/{board.pk}/").text


def test_choosing_a_preset_fills_the_form(staff_client, workspace):
    response = staff_client.get(url(workspace, "new/"), {"preset": "gemini"}, **HTMX)
    assert response.status_code == 200
    assert 'value="gemini --experimental-acp"' in response.text
    # The key is a secret to set (write-only), not an environment line.
    assert 'data-secret-name="GEMINI_API_KEY" data-secret-set="false"' in response.text
    assert "GEMINI_API_KEY=" not in response.text
    assert 'data-preset="gemini"' in response.text
    # Before anything runs, the operator reads that Gemini CLI cannot ask over ACP, and why.
    assert 'data-testid="profile-preset-questions" data-asks="no"' in response.text
    assert "leaves its ask tool out in ACP mode" in response.text
    kimi = staff_client.get(url(workspace, "new/"), {"preset": "kimi-code"}, **HTMX).text
    assert 'value="npx -y @moonshot-ai/kimi-code@2.1.0 acp"' in kimi
    assert 'data-testid="profile-preset-questions" data-asks="yes"' in kimi
    assert "profile-preset-questions" not in staff_client.get(url(workspace, "new/"), {"preset": "custom"}, **HTMX).text


def test_adding_a_profile_stores_argv_and_environment(staff_client, workspace):
    response = staff_client.post(
        url(workspace, "new/"),
        {
            "name": "Codex",
            "agent_id": "codex-acp",
            "command": "npx -y '@zed-industries/codex-acp'",
            "env": "\nRUST_LOG=info",
            "secrets-new-0-name": "OPENAI_API_KEY",
            "secrets-new-0-value": SECRET,
            "working_dir": "",
            "auth_method": "",
            "executor": "",
        },
    )
    profile = AgentProfile.objects.get(name="Codex")
    assert response.status_code == 302
    assert response.url == url(workspace) + f"#profile-{profile.pk}"
    assert profile.command == ["npx", "-y", "@zed-industries/codex-acp"]
    assert profile.env == {"RUST_LOG": "info"}
    assert profile.secret_names == ["OPENAI_API_KEY"]
    assert SECRET not in str(profile.secret_env)
    assert secret_box().open("OPENAI_API_KEY", profile.secret_env["OPENAI_API_KEY"]) == SECRET
    assert profile.workspace == workspace


def test_a_bad_command_or_environment_line_is_refused_with_a_sentence(staff_client, workspace):
    response = staff_client.post(
        url(workspace, "new/"), {"name": "X", "agent_id": "x", "command": "npx 'unclosed", "env": "not a line"}
    )
    assert response.status_code == 200
    assert "The command has an unclosed quote." in response.text
    assert "Line 1 is not NAME=value" in response.text
    assert not AgentProfile.objects.filter(name="X").exists()


def test_a_command_longer_than_the_limit_is_refused_before_it_is_split(staff_client, workspace):
    command = "agent " + "x" * limits.PROFILE_COMMAND_CHARS
    response = staff_client.post(url(workspace, "new/"), {"name": "Long", "agent_id": "x", "command": command})
    assert response.status_code == 200
    assert f"Ensure this value has at most {limits.PROFILE_COMMAND_CHARS} characters" in response.text
    assert not AgentProfile.objects.filter(name="Long").exists()


def test_a_stored_secret_is_never_shown_and_a_replacement_left_empty_keeps_it(staff_client, workspace, profile):
    for page in (staff_client.get(url(workspace)), staff_client.get(url(workspace, f"{profile.pk}/edit/"))):
        assert page.status_code == 200
        assert SECRET not in page.text
    edit = staff_client.get(url(workspace, f"{profile.pk}/edit/")).text
    assert 'data-secret-name="ANTHROPIC_API_KEY" data-secret-set="true"' in edit
    assert "DISABLE_TELEMETRY=1</textarea>" in edit
    response = staff_client.post(
        url(workspace, f"{profile.pk}/edit/"),
        {
            "name": "Claude Code",
            "agent_id": "claude-acp",
            "command": "node /opt/bridge/dist/index.js",
            "env": "EXTRA=yes",
            "secrets-replace-ANTHROPIC_API_KEY": "",
            "auth_method": "",
        },
    )
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.env == {"EXTRA": "yes"}  # DISABLE_TELEMETRY's line was removed
    assert secret_box().open("ANTHROPIC_API_KEY", profile.secret_env["ANTHROPIC_API_KEY"]) == SECRET
    assert profile.command == ["node", "/opt/bridge/dist/index.js"]


def test_a_credential_typed_into_the_environment_is_refused_with_the_way_to_keep_it_secret(staff_client, workspace):
    response = staff_client.post(
        url(workspace, "new/"), {"name": "Leaky", "agent_id": "x", "command": "x", "env": f"OPENAI_API_KEY={SECRET}"}
    )

    assert response.status_code == 200
    assert "OPENAI_API_KEY looks like a credential: add it under Secrets" in response.text
    assert SECRET not in response.text
    assert not AgentProfile.objects.filter(name="Leaky").exists()


def test_the_auth_method_is_chosen_among_the_last_checks(staff_client, workspace, profile):
    edit = staff_client.get(url(workspace, f"{profile.pk}/edit/")).text
    assert re.search(r'<input type="text" name="auth_method"', edit)  # never checked: free text
    profile.last_check = {
        "outcome": "ok",
        "answer": {"auth_methods": [{"id": "claude-login", "name": "Log in", "needs_person": True}]},
    }
    profile.save()
    edit = staff_client.get(url(workspace, f"{profile.pk}/edit/")).text
    assert '<select name="auth_method"' in edit
    assert '<option value="claude-login">Log in (claude-login)</option>' in edit
    refused = staff_client.post(
        url(workspace, f"{profile.pk}/edit/"),
        {"name": "Claude", "agent_id": "claude-acp", "command": "claude", "env": "", "auth_method": "made-up"},
    )
    assert refused.status_code == 200
    assert "Select a valid choice" in refused.text


def test_removing_says_what_becomes_of_its_sessions_and_keeps_them(staff_client, workspace, profile, make_task):
    task = make_task()
    TaskSession.objects.create(task=task, agent_profile=profile, state=SessionState.COMPLETED)
    TaskSession.objects.create(task=task, agent_profile=profile, state=SessionState.RUNNING)
    page = staff_client.get(url(workspace)).text
    assert "2 sessions used this profile. They stay on their tasks with their timelines" in page
    assert "1 of them is running: its agent keeps running until it ends or is stopped." in page
    response = staff_client.post(url(workspace, f"{profile.pk}/delete/"))
    assert response.status_code == 302
    assert not AgentProfile.objects.filter(pk=profile.pk).exists()
    assert list(task.sessions.values_list("agent_profile", flat=True)) == [None, None]


def test_posts_need_the_csrf_token(staff, workspace, profile):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    assert client.post(url(workspace, f"{profile.pk}/delete/")).status_code == 403
    assert client.post(url(workspace, f"{profile.pk}/check/")).status_code == 403
    assert AgentProfile.objects.filter(pk=profile.pk).exists()
