"""agentctl tokens and executor hosts' private keys are sealed at rest: read access to the database runs no agent."""

import logging
import secrets

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection

from kandev_web.agents.models import Executor
from kandev_web.sessions.models import AgentExecution, TaskSession
from testing_support.migrations import migrate, migrate_to_latest

pytestmark = pytest.mark.postgres

BEFORE = [("agent_sessions", "0012_agent_profile_secret_env")]
AFTER = [("agent_sessions", "0013_sealed_tokens")]


def raw(table: str, pk: int, column: str = "token") -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])  # noqa: S608 - a fixed table and column
        return cursor.fetchone()[0]


def test_tokens_are_stored_sealed_and_read_back_opened(make_task):
    private_key, agentctl_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    executor = Executor.objects.create(name="gpu-1", host="gpu-1.lan", private_key=private_key)
    session = TaskSession.objects.create(task=make_task("Sealed"))
    execution = AgentExecution.objects.create(session=session, url="ws://127.0.0.1:1/agent", token=agentctl_token)

    for table, column, pk, token in [
        ("agent_sessions_executor", "private_key", executor.pk, private_key),
        ("agent_sessions_agentexecution", "token", execution.pk, agentctl_token),
    ]:
        stored = raw(table, pk, column)
        assert token not in stored
        assert stored.startswith("gAAAA")  # a Fernet token
    assert Executor.objects.get(pk=executor.pk).address.private_key == private_key
    assert AgentExecution.objects.get(pk=execution.pk).token == agentctl_token
    assert AgentExecution.objects.filter(pk=execution.pk).values_list("token", flat=True).get() == agentctl_token


def test_a_token_no_key_opens_reads_as_empty_and_is_logged_by_field_name_only(make_task, caplog):
    session = TaskSession.objects.create(task=make_task("Old key"))
    execution = AgentExecution.objects.create(session=session, token="will be replaced")
    foreign = Fernet(Fernet.generate_key()).encrypt(b"sealed-with-a-key-long-gone").decode()
    with connection.cursor() as cursor:  # sealed with a key this deployment no longer has
        cursor.execute("UPDATE agent_sessions_agentexecution SET token = %s WHERE id = %s", [foreign, execution.pk])

    with caplog.at_level(logging.WARNING):
        assert AgentExecution.objects.get(pk=execution.pk).token == ""

    assert "AgentExecution.token: a stored value opens with no key of KANDEV_SECRETS_KEY" in caplog.text
    assert foreign not in caplog.text
    assert "long-gone" not in caplog.text


@pytest.mark.django_db(transaction=True)
def test_upgrading_seals_the_tokens_stored_in_clear_and_a_rollback_opens_them_again():
    old = migrate(BEFORE)
    executor = old.get_model("agent_sessions", "Executor").objects.create(name="gpu-1", url="ws://x", token="clear-1")

    sealed = migrate(AFTER)
    assert raw("agent_sessions_executor", executor.pk).startswith("gAAAA")
    assert sealed.get_model("agent_sessions", "Executor").objects.get(pk=executor.pk).token == "clear-1"

    migrate(BEFORE)
    assert raw("agent_sessions_executor", executor.pk) == "clear-1"
    migrate_to_latest()


def test_rotate_secrets_reseals_the_tokens_with_the_first_key_and_names_what_no_key_opens(db, settings, capsys):
    executor = Executor.objects.create(name="gpu-1", host="gpu-1.lan", private_key="ssh-key-123")
    new = Fernet.generate_key()
    settings.KANDEV_SECRETS_KEYS = [new, *settings.KANDEV_SECRETS_KEYS]

    call_command("rotate_secrets")

    assert "Re-encrypted 1 secret(s)" in capsys.readouterr().out
    settings.KANDEV_SECRETS_KEYS = [new]  # the old key dropped
    assert Executor.objects.get(pk=executor.pk).private_key == "ssh-key-123"
    lost = Executor.objects.create(name="gpu-2", host="gpu-2.lan", private_key="x")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE agent_sessions_executor SET private_key = %s WHERE id = %s",
            [Fernet(Fernet.generate_key()).encrypt(b"lost").decode(), lost.pk],
        )
    with pytest.raises(CommandError, match=rf"Executor {lost.pk}: private_key"):
        call_command("rotate_secrets")
