"""An agent profile's secrets are write-only: sealed at rest, never in the admin's pages, history or a repr,
and opened only into the environment agentctl is started with (docs/decisions/operator.md#secrets-at-rest)."""

import asyncio
import json

import pytest
from asgiref.sync import async_to_sync
from cryptography.fernet import Fernet
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import override_settings

from kandev_web.agentctl.scrub import SECRET_NAMES_VAR
from kandev_web.agents.models import AgentProfile
from kandev_web.forms import SecretEnvChange, SecretEnvField
from kandev_web.sessions import services
from kandev_web.sessions.launching import launch_environment
from kandev_web.sessions.models import TaskSession
from kandev_web.sessions.runner import Runner

# The sealed column is JSON: jsonb on PostgreSQL, text on SQLite.
pytestmark = pytest.mark.postgres

KEY = "sk-ant-api03-write-only-0123456789"
OTHER = "sk-ant-api03-replaced-9876543210"


@pytest.fixture
def admin_client(client, db):
    user = get_user_model().objects.create_superuser("root", password="pw-123456")
    client.force_login(user)
    return client


@pytest.fixture
def profile(workspace):
    profile = AgentProfile(workspace=workspace, name="Claude", agent_id="claude-acp", command=["claude"])
    profile.set_secret("ANTHROPIC_API_KEY", KEY)
    profile.save()
    return profile


def _change_url(profile):
    return f"/admin/agents/agentprofile/{profile.pk}/change/"


def _form_data(profile, **extra):
    return {
        "workspace": profile.workspace_id,
        "name": profile.name,
        "agent_id": profile.agent_id,
        "command": json.dumps(profile.command),
        "env": json.dumps(profile.env),
        "working_dir": "",
        "mcp_servers": "[]",
        "auth_method": "",
        "executor": "",
        **extra,
    }


def _raw_row(profile) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM agent_sessions_agentprofile WHERE id = %s", [profile.pk])
        return repr(cursor.fetchone())


def test_a_secret_is_stored_sealed_and_opens_to_its_value(profile):
    profile.refresh_from_db()
    assert KEY not in _raw_row(profile)
    assert profile.secret_names == ["ANTHROPIC_API_KEY"]
    assert launch_environment({}, profile.secret_env)["ANTHROPIC_API_KEY"] == KEY
    assert KEY not in repr(profile)
    assert KEY not in str(profile)


def test_the_change_page_says_set_and_never_holds_the_value(admin_client, profile):
    page = admin_client.get(_change_url(profile)).content.decode()
    assert KEY not in page
    assert 'data-secret-name="ANTHROPIC_API_KEY" data-secret-set="true"' in page
    assert 'name="secrets-replace-ANTHROPIC_API_KEY" value=""' in page
    assert 'name="secrets-clear-ANTHROPIC_API_KEY"' in page
    # Nor its sealed token: nothing of it leaves the server.
    assert profile.secret_env["ANTHROPIC_API_KEY"] not in page


def test_adding_replacing_and_clearing_from_the_admin_leaves_no_value_in_its_history(admin_client, profile):
    response = admin_client.post(
        _change_url(profile),
        _form_data(profile, **{"secrets-new-0-name": "GITHUB_TOKEN", "secrets-new-0-value": "ghp_added_0123456789"}),
    )
    assert response.status_code == 302, response.content.decode()
    profile.refresh_from_db()
    assert profile.secret_names == ["ANTHROPIC_API_KEY", "GITHUB_TOKEN"]

    admin_client.post(_change_url(profile), _form_data(profile, **{"secrets-replace-ANTHROPIC_API_KEY": OTHER}))
    profile.refresh_from_db()
    assert launch_environment({}, profile.secret_env)["ANTHROPIC_API_KEY"] == OTHER

    admin_client.post(_change_url(profile), _form_data(profile, **{"secrets-clear-GITHUB_TOKEN": "on"}))
    profile.refresh_from_db()
    assert profile.secret_names == ["ANTHROPIC_API_KEY"]

    history = list(LogEntry.objects.values_list("change_message", "object_repr"))
    assert len(history) == 3
    assert all("Secrets" in message for message, _ in history)
    for value in (KEY, OTHER, "ghp_added_0123456789"):
        assert value not in repr(history)
        assert value not in _raw_row(profile)
    assert KEY not in admin_client.get(_change_url(profile) + "../history/").content.decode()


def test_leaving_the_inputs_empty_keeps_the_secret(admin_client, profile):
    token = profile.secret_env["ANTHROPIC_API_KEY"]
    response = admin_client.post(_change_url(profile), _form_data(profile, name="Claude 2"))
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.name == "Claude 2"
    assert profile.secret_env["ANTHROPIC_API_KEY"] == token


def test_a_refused_form_never_sends_what_was_typed_back(admin_client, profile):
    typed = "sk-typed-but-refused-0123456789"
    data = _form_data(
        profile,
        env=json.dumps({"OPENAI_API_KEY": "sk-clear-text-in-env-0123"}),
        **{"secrets-replace-ANTHROPIC_API_KEY": typed},
    )
    page = admin_client.post(_change_url(profile), data).content.decode()
    assert "OPENAI_API_KEY looks like a credential: add it under Secrets" in page
    assert typed not in page
    assert KEY not in page
    profile.refresh_from_db()
    assert launch_environment({}, profile.secret_env)["ANTHROPIC_API_KEY"] == KEY


def test_a_variable_both_in_env_and_among_the_secrets_is_refused(admin_client, profile):
    data = _form_data(
        profile,
        env=json.dumps({"MODEL_NAME": "x"}),
        **{"secrets-new-0-name": "MODEL_NAME", "secrets-new-0-value": "also-secret"},
    )
    page = admin_client.post(_change_url(profile), data).content.decode()
    assert "MODEL_NAME is also a secret" in page
    assert "also-secret" not in page


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"new": [("1BAD", "value-0123")]}, "1BAD is not a variable name"),
        ({"new": [("", "value-0123")]}, "Name the secret"),
        ({"new": [("GOOD_TOKEN", "")]}, "Give GOOD_TOKEN a value"),
        ({"new": [("A_TOKEN", "x\0y")]}, "holds a NUL character"),
        ({"new": [("A_TOKEN", "x" * 16_385)]}, "longer than 16384 characters"),
        ({"replace": {"A_TOKEN": "one"}, "new": [("A_TOKEN", "two")]}, "A_TOKEN is given twice"),
        ({"replace": {"A_TOKEN": "one"}, "clear": ["A_TOKEN"]}, "Either replace A_TOKEN or clear it"),
    ],
)
def test_the_field_refuses_what_no_environment_could_hold_with_a_sentence(data, says):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        SecretEnvField().clean(data)
    assert any(says in message for message in refused.value.messages)
    assert "value-0123" not in repr(refused.value.messages)


def test_the_field_makes_values_storable_and_its_change_never_shows_them():
    change = SecretEnvField().clean({"replace": {"A_TOKEN": "", "B_TOKEN": "lone\ud800surrogate"}, "clear": ["C"]})
    assert change == SecretEnvChange(values={"B_TOKEN": "lone\ufffdsurrogate"}, cleared=frozenset({"C"}))
    assert "surrogate" not in repr(change)
    assert "B_TOKEN" in repr(change)
    assert not SecretEnvField().clean({"replace": {"A_TOKEN": ""}, "new": [("", "")]})


def test_the_widget_shows_expected_names_as_not_set():
    html = SecretEnvField(expected_names=["GEMINI_API_KEY"]).widget.render("secrets", ["ANTHROPIC_API_KEY"])
    assert 'data-secret-name="ANTHROPIC_API_KEY" data-secret-set="true"' in html
    assert 'data-secret-name="GEMINI_API_KEY" data-secret-set="false"' in html
    assert "not set" in html


class _Recorder:
    def __init__(self):
        self.plans = []

    async def start(self, plan, prompt, turn_id):
        self.plans.append(plan)

    def submit(self, coroutine):
        asyncio.run(coroutine)


@pytest.mark.django_db(transaction=True)
def test_the_launch_plan_carries_it_sealed_and_the_launch_env_opened(profile, make_task, monkeypatch):
    recorder = _Recorder()
    monkeypatch.setattr(services, "runner", recorder)
    monkeypatch.setattr(services, "ensure_worktree", lambda task_id, profile: None)
    services.start_session(make_task(), profile, "go", "http://testserver/mcp/")
    (plan,) = recorder.plans
    assert KEY not in repr(plan)
    assert KEY not in repr(plan.env)
    assert "ANTHROPIC_API_KEY" not in plan.env
    env = launch_environment(plan.env, plan.secret_env)
    assert env["ANTHROPIC_API_KEY"] == KEY
    assert env[SECRET_NAMES_VAR] == "ANTHROPIC_API_KEY"
    assert env["PATH"]  # what the web process gives every agent is still there


@pytest.mark.django_db(transaction=True)
def test_a_secret_that_does_not_open_fails_the_start_with_a_sentence(profile, make_task, monkeypatch):
    recorder = _Recorder()
    monkeypatch.setattr(services, "runner", recorder)
    monkeypatch.setattr(services, "ensure_worktree", lambda task_id, profile: None)
    session = services.start_session(make_task(), profile, "go", "http://testserver/mcp/")
    (plan,) = recorder.plans
    with override_settings(KANDEV_SECRETS_KEYS=[Fernet.generate_key()]):
        async_to_sync(Runner().start)(plan, [], 0)
    session = TaskSession.objects.get(pk=session.pk)
    assert session.state == "FAILED"
    assert "The secret ANTHROPIC_API_KEY cannot be decrypted with KANDEV_SECRETS_KEY" in session.error


def test_rotate_secrets_reseals_with_the_first_key_and_names_what_no_key_opens(profile, settings, capsys):
    from django.core.management import CommandError, call_command

    from kandev_web.secret_box import SecretBox

    new = Fernet.generate_key()
    settings.KANDEV_SECRETS_KEYS = [new, *settings.KANDEV_SECRETS_KEYS]
    call_command("rotate_secrets")
    assert "Re-encrypted 1 secret(s)" in capsys.readouterr().out
    settings.KANDEV_SECRETS_KEYS = [new]  # the old key dropped
    profile.refresh_from_db()
    assert launch_environment({}, profile.secret_env)["ANTHROPIC_API_KEY"] == KEY

    profile.secret_env = {**profile.secret_env, "LOST_TOKEN": SecretBox([Fernet.generate_key()]).seal("lost-value")}
    profile.save()
    with pytest.raises(CommandError, match=r"Claude \(\d+\): LOST_TOKEN") as failed:
        call_command("rotate_secrets")
    assert "lost-value" not in str(failed.value)


@pytest.mark.django_db(transaction=True)
def test_checking_a_profile_gives_the_agent_its_secret_and_shows_it_masked(make_operator, workspace):
    from django.test import Client

    client = Client()
    client.force_login(make_operator("checker", workspace=workspace, staff=True))
    profile = AgentProfile(
        workspace=workspace, name="Echo", agent_id="echo", command=["sh", "-c", 'echo "key=$MOCK_API_KEY" >&2; exit 3']
    )
    profile.set_secret("MOCK_API_KEY", KEY)
    profile.save()
    response = client.post(f"/settings/workspaces/{workspace.pk}/agents/{profile.pk}/check/", HTTP_HX_REQUEST="true")
    profile.refresh_from_db()
    assert profile.last_check["outcome"] == "exited"
    # The agent had it (the line is not "key="), and what it printed is masked in the stored check and the page.
    assert "key=[secret]" in json.dumps(profile.last_check)
    assert "key=[secret]" in response.text
    assert KEY not in json.dumps(profile.last_check)
    assert KEY not in response.text
