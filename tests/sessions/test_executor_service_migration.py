"""Upgrading turns hosts of the removed kandev-executor service into SSH hosts to complete, links kept."""

import pytest

from kandev_web.agents.models import Executor
from kandev_web.executor.ssh import SshError, SshFailure, trusted_host_key
from testing_support.migrations import migrate, migrate_to_latest

pytestmark = pytest.mark.postgres

BEFORE = [("agent_sessions", "0014_executor_ssh")]
AFTER = [("agent_sessions", "0015_retire_executor_service")]


@pytest.mark.django_db(transaction=True)
def test_a_service_host_becomes_an_ssh_host_with_no_key_so_nothing_contacts_it_until_completed():
    old = migrate(BEFORE)
    OldExecutor = old.get_model("agent_sessions", "Executor")
    workspace = old.get_model("board", "Workspace").objects.create(name="Upgraded")
    service = OldExecutor.objects.create(name="gpu-old", url="wss://gpu-old.lan:7310/executor/stream", token="t")
    ssh = OldExecutor.objects.create(name="gpu-ssh", host="gpu-ssh.lan", user="kandev", host_key="ssh-ed25519 AAAA")
    profile = old.get_model("agent_sessions", "AgentProfile").objects.create(
        workspace=workspace, name="Claude", agent_id="claude", command=["c"], executor=service
    )

    migrate(AFTER)
    migrate_to_latest()

    converted = Executor.objects.get(pk=service.pk)
    assert (converted.host, converted.port, converted.user, converted.host_key) == ("gpu-old.lan", 22, "", "")
    assert converted.agent_profiles.get().pk == profile.pk
    with pytest.raises(SshError) as refused:
        trusted_host_key(converted.address.host_key)
    assert refused.value.failure is SshFailure.NO_HOST_KEY
    kept = Executor.objects.get(pk=ssh.pk)
    assert (kept.host, kept.user, kept.host_key) == ("gpu-ssh.lan", "kandev", "ssh-ed25519 AAAA")
