"""Registering executor hosts, and what a session started on one asks of it."""

import pytest
from django.contrib import admin
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import RequestFactory

from kandev_web.agents.models import AgentProfile, Executor
from kandev_web.board.models import Workspace
from kandev_web.sessions.launching import agent_environment


def profile(workspace, name="Claude"):
    return AgentProfile.objects.create(workspace=workspace, name=name, agent_id="claude-acp", command=["claude"])


def test_an_agent_on_an_executor_host_gets_its_path_and_home_from_that_host(monkeypatch):
    monkeypatch.setenv("PATH", "/web/bin")
    monkeypatch.setenv("KANDEV_ELICITATION_ANSWER_TIMEOUT", "90s")
    here = agent_environment({"ANTHROPIC_MODEL": "x"})
    there = agent_environment({"ANTHROPIC_MODEL": "x"}, remote=True)
    assert here["PATH"] == "/web/bin"
    assert "PATH" not in there
    for env in (here, there):
        assert env["KANDEV_ELICITATION_ANSWER_TIMEOUT"] == "90s"
        assert env["ANTHROPIC_MODEL"] == "x"


HOST_KEY = "[gpu-2.lan]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIN6BomRUofCii6uq7xl1awFsIlQPttCEDhQ/+cBNkQyt"


def test_the_admin_never_shows_an_executor_private_key_and_keeps_it_when_left_blank(db, make_operator):
    executor = Executor.objects.create(
        name="gpu-1", host="gpu-1.lan", user="kandev", host_key=HOST_KEY, private_key="s3cret-key"
    )
    request = RequestFactory().get("/")
    request.user = make_operator("root", superuser=True)
    model_admin = admin.site._registry[Executor]
    form_class = model_admin.get_form(request, executor)
    assert "s3cret-key" not in str(form_class(instance=executor)["private_key"])
    data = {"name": "gpu-1", "host": "gpu-2.lan", "user": "kandev", "host_key": HOST_KEY, "private_key": ""}
    form = form_class({**data, "port": 22, "agentctl": "kandev-agentctl", "workdir_root": "w"}, instance=executor)
    assert form.is_valid(), form.errors
    model_admin.save_model(request, form.save(commit=False), form, change=True)
    executor.refresh_from_db()
    assert (executor.host, executor.private_key) == ("gpu-2.lan", "s3cret-key")


def test_the_command_registers_an_ssh_host_with_its_host_key_and_a_sealed_private_key(workspace, tmp_path):
    claude = profile(workspace)
    key_file = tmp_path / "id_ed25519"
    key_file.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key\n-----END OPENSSH PRIVATE KEY-----\n")
    call_command(
        "executor",
        "gpu-2",
        "--ssh",
        "kandev@gpu-2.lan:2222",
        "--host-key",
        HOST_KEY,
        "--private-key-file",
        str(key_file),
        "--agentctl",
        "/srv/kandev/.venv/bin/kandev-agentctl",
        "--assign",
        "Claude",
    )
    executor = Executor.objects.get(name="gpu-2")
    address = executor.address
    assert (address.user, address.host, address.port, address.host_key) == ("kandev", "gpu-2.lan", 2222, HOST_KEY)
    assert address.agentctl == "/srv/kandev/.venv/bin/kandev-agentctl"
    assert address.private_key == key_file.read_text()
    assert "not-a-real-key" not in repr(address)
    with connection.cursor() as cursor:
        cursor.execute("SELECT private_key FROM agent_sessions_executor WHERE id = %s", [executor.pk])
        assert "not-a-real-key" not in cursor.fetchone()[0]  # sealed at rest
    claude.refresh_from_db()
    assert claude.executor == executor


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gpu-2", "--ssh", "kandev@gpu-2.lan"], "ssh-keyscan"),
        (["gpu-2", "--ssh", "kandev@gpu-2.lan", "--host-key", "not a key"], "ssh-keyscan"),
        (["gpu-2", "--ssh", "gpu-2.lan", "--host-key", HOST_KEY], "USER@HOST"),
        (["gpu-2"], "--ssh"),
    ],
)
def test_the_command_refuses_an_ssh_host_it_could_not_verify(db, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("executor", *args)
    assert not Executor.objects.exists()


def test_the_command_assigns_that_workspace_s_profiles_only_and_updates_a_host_it_has(workspace):
    claude, elsewhere = profile(workspace), profile(Workspace.objects.create(name="Other"))
    ssh = ["--ssh", "kandev@gpu-2.lan", "--host-key", HOST_KEY]
    call_command("executor", "gpu-2", *ssh, "--assign", "Claude", "--workspace", "Platform")
    executor = Executor.objects.get(name="gpu-2")
    claude.refresh_from_db(), elsewhere.refresh_from_db()
    assert claude.executor == executor
    assert elsewhere.executor is None

    call_command("executor", "gpu-2", "--ssh", "kandev@gpu-2.lan:2222", "--host-key", HOST_KEY)
    executor.refresh_from_db()
    assert executor.port == 2222
    assert Executor.objects.count() == 1

    with pytest.raises(CommandError, match="Nope"):
        call_command("executor", "gpu-3", "--ssh", "kandev@gpu-3.lan", "--host-key", HOST_KEY, "--assign", "Nope")
    assert not Executor.objects.filter(name="gpu-3").exists()
