"""Upgrading moves credentials found in clear in a profile's env into its sealed secrets, and back on a rollback
(docs/decisions/operator.md#secrets-at-rest)."""

import pytest
from django.db import connection

from kandev_web.sessions.launching import launch_environment
from testing_support.migrations import migrate, migrate_to_latest

# JSON columns differ between the two databases (jsonb on PostgreSQL).
pytestmark = pytest.mark.postgres

BEFORE = [("agent_sessions", "0011_agent_profile_last_check")]
AFTER = [("agent_sessions", "0012_agent_profile_secret_env")]
ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-migrated-0123456789",
    "AWS_SECRET_ACCESS_KEY": "aws-migrated-0123456789",
    "DB_PASSWORD": "hunter2-migrated",
    "HF_TOKEN": "hf_migrated_0123456789",
    "ANTHROPIC_MODEL": "claude-sonnet",
    "MAX_TOKENS": "4096",
    "not a name_TOKEN": "left where it is",
}


@pytest.mark.django_db(transaction=True)
def test_credentials_move_into_secrets_and_back():
    old_apps = migrate(BEFORE)
    Workspace = old_apps.get_model("board", "Workspace")
    OldProfile = old_apps.get_model("agent_sessions", "AgentProfile")
    workspace = Workspace.objects.create(name="Upgraded")
    profile = OldProfile.objects.create(workspace=workspace, name="Claude", agent_id="claude", command=["c"], env=ENV)
    plain = OldProfile.objects.create(workspace=workspace, name="Mock", agent_id="mock", command=["m"], env={})

    new_apps = migrate(AFTER)
    moved = new_apps.get_model("agent_sessions", "AgentProfile").objects.get(pk=profile.pk)
    kept = {"ANTHROPIC_MODEL": "claude-sonnet", "MAX_TOKENS": "4096", "not a name_TOKEN": "left where it is"}
    assert moved.env == kept
    assert sorted(moved.secret_env) == ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "HF_TOKEN"]
    opened = launch_environment({}, moved.secret_env)
    assert {name: opened[name] for name in moved.secret_env} == {name: ENV[name] for name in moved.secret_env}
    with connection.cursor() as cursor:
        cursor.execute("SELECT env, secret_env FROM agent_sessions_agentprofile WHERE id = %s", [profile.pk])
        row = repr(cursor.fetchone())
    assert not any(ENV[name] in row for name in moved.secret_env)
    assert new_apps.get_model("agent_sessions", "AgentProfile").objects.get(pk=plain.pk).secret_env == {}

    old_apps = migrate(BEFORE)
    assert old_apps.get_model("agent_sessions", "AgentProfile").objects.get(pk=profile.pk).env == ENV
    migrate_to_latest()
