"""Roles: a workspace's admins manage its settings, and only its; the deployment's settings are superusers'.

Django's ``is_staff`` used to be the one check: staff in one workspace could
manage every workspace they were a member of, change the feature flags, read
``/metrics`` and register any directory of the web machine as a repository.
"""

import asyncio
import io
import os
import subprocess

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agents.models import AgentProfile, Executor
from kandev_web.board.models import Membership, Role, Workspace
from kandev_web.repositories import roots
from kandev_web.repositories.models import Repository
from kandev_web.webhooks.models import Webhook
from testing_support.executor import STRANGER_HOST_KEY, ssh_test_host_fields, unreachable_ssh_host
from testing_support.migrations import migrate

SETTINGS = "/settings/workspaces/{}/"


def git_repository(path):
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(path)], check=True)
    author = ["-c", "user.email=dev@example.com", "-c", "user.name=Dev"]
    subprocess.run(["git", "-C", str(path), *author, "commit", "-q", "--allow-empty", "-m", "Start"], check=True)
    return path


@pytest.fixture
def theirs(db):
    """A second workspace with a profile, a repository and a webhook of its own."""
    workspace = Workspace.objects.create(name="Theirs")
    profile = AgentProfile.objects.create(workspace=workspace, name="Mock", agent_id="mock", command=["true"])
    repository = Repository.objects.create(workspace=workspace, name="shop", path="/srv/code/shop")
    hook = Webhook(workspace=workspace, name="CI", url="https://ci.example.com/hook")
    hook.set_signing_secret("whsec-test")
    hook.save()
    return workspace, profile, repository, hook


@pytest.fixture
def staff_in_both(staff, theirs):
    """Root: staff, an admin of the first workspace and a plain member of the second."""
    theirs[0].members.add(staff)
    return staff


def test_a_staff_admin_of_one_workspace_cannot_manage_another_they_are_only_a_member_of(
    staff_in_both, theirs, workspace, make_client
):
    other, profile, repository, hook = theirs
    client = make_client(staff_in_both)
    base = SETTINGS.format(other.pk)

    for page in ("agents/", "repositories/", "webhooks/", f"agents/{profile.pk}/edit/", f"webhooks/{hook.pk}/log/"):
        assert client.get(base + page).status_code == 403, page
    for action, data in (
        ("agents/new/", {"name": "Mine now", "agent_id": "mock", "command": "true"}),
        (f"agents/{profile.pk}/edit/", {"name": "Renamed", "agent_id": "mock", "command": "true"}),
        (f"agents/{profile.pk}/check/", {}),
        (f"agents/{profile.pk}/delete/", {}),
        ("repositories/", {"name": "theirs", "path": "/srv/code/shop", "default_branch": ""}),
        (f"repositories/{repository.pk}/delete/", {}),
        ("webhooks/new/", {"name": "Mine", "url": "https://evil.example.com/", "events": ["task.created"]}),
        (f"webhooks/{hook.pk}/active/", {"active": "false"}),
        (f"webhooks/{hook.pk}/test/", {}),
        (f"webhooks/{hook.pk}/delete/", {}),
    ):
        assert client.post(base + action, data).status_code == 403, action

    profile.refresh_from_db()
    hook.refresh_from_db()
    assert (profile.name, hook.active) == ("Mock", True)
    assert Repository.objects.filter(workspace=other).count() == 1
    assert AgentProfile.objects.filter(workspace=other).count() == 1
    assert not hook.deliveries.exists()
    # Their own workspace's pages are theirs still.
    for page in ("agents/", "repositories/", "webhooks/"):
        assert client.get(SETTINGS.format(workspace.pk) + page).status_code == 200, page


def test_another_workspaces_objects_are_not_found_through_ones_own(staff, theirs, workspace, make_client):
    other, profile, repository, hook = theirs
    base = SETTINGS.format(workspace.pk)
    client = make_client(staff)

    assert client.get(SETTINGS.format(other.pk) + "agents/").status_code == 404  # not a member at all
    assert client.post(base + f"agents/{profile.pk}/delete/").status_code == 404
    assert client.post(base + f"repositories/{repository.pk}/delete/").status_code == 404
    assert client.post(base + f"webhooks/{hook.pk}/delete/").status_code == 404
    assert client.get(base + f"webhooks/{hook.pk}/log/").status_code == 404
    assert AgentProfile.objects.filter(pk=profile.pk).exists()
    assert Webhook.objects.filter(pk=hook.pk).exists()


def test_the_board_links_its_workspaces_admins_to_the_settings_and_only_superusers_to_the_flags(
    staff_in_both, theirs, board, superuser, make_client
):
    from kandev_web.board.models import Board

    their_board = Board.objects.create(workspace=theirs[0], name="Theirs")
    client = make_client(staff_in_both)
    mine, other = client.get(f"/boards/{board.pk}/").text, client.get(f"/boards/{their_board.pk}/").text

    for testid in ("board-agent-profiles", "board-repositories", "board-webhooks"):
        assert testid in mine
        assert testid not in other
    assert "nav-feature-toggles" not in mine
    assert "nav-feature-toggles" in make_client(superuser).get(f"/boards/{board.pk}/").text


def test_a_workspace_admin_who_is_no_superuser_cannot_change_feature_flags(staff_client, superuser_client):
    key = "features.acpElicitation"
    assert staff_client.get("/settings/feature-toggles/").status_code == 403
    assert staff_client.post(f"/settings/feature-toggles/{key}/", {"value": "false"}).status_code == 403
    assert staff_client.get("/api/v1/runtime-flags").status_code == 403
    patch = staff_client.patch(f"/api/v1/runtime-flags/{key}", {"override": False}, content_type="application/json")
    assert patch.status_code == 403

    assert superuser_client.get("/settings/feature-toggles/").status_code == 200


def test_a_workspace_admin_who_is_no_superuser_cannot_read_metrics_without_the_token(
    staff_client, superuser_client, settings
):
    settings.KANDEV_METRICS_TOKEN = ""
    assert staff_client.get("/metrics").status_code == 403
    assert superuser_client.get("/metrics").status_code == 200


# Where a repository may be registered ---------------------------------------------------------


def register(client, workspace, path, name="shop"):
    return client.post(
        SETTINGS.format(workspace.pk) + "repositories/", {"name": name, "path": str(path), "default_branch": ""}
    )


@pytest.fixture
def code_root(settings, tmp_path):
    root = tmp_path / "code"
    root.mkdir()
    settings.KANDEV_REPOSITORY_ROOTS = [str(root)]
    return root


def test_an_admin_registers_a_repository_under_a_configured_root(staff_client, workspace, code_root):
    repository = git_repository(code_root / "shop")
    assert register(staff_client, workspace, repository).status_code == 302
    assert Repository.objects.get(workspace=workspace).path == str(repository)


def test_proc_self_cwd_is_refused_for_an_admin(staff_client, workspace, code_root):
    response = register(staff_client, workspace, "/proc/self/cwd")

    assert response.status_code == 200
    assert "/proc/self/cwd is outside the directories repositories may be registered in" in response.text
    assert "only a superuser may register it." in response.text
    assert not Repository.objects.exists()


def test_a_path_outside_the_roots_is_refused_for_an_admin_and_allowed_a_superuser(
    staff_client, superuser_client, workspace, code_root, tmp_path
):
    outside = git_repository(tmp_path / "elsewhere")

    refused = register(staff_client, workspace, outside)
    assert refused.status_code == 200
    assert f"{outside} is outside the directories repositories may be registered in ({code_root})" in refused.text
    assert not Repository.objects.exists()

    assert register(superuser_client, workspace, outside).status_code == 302
    assert Repository.objects.get().path == str(outside)


def test_a_symlink_or_dot_dot_out_of_a_root_is_refused(staff_client, workspace, code_root, tmp_path):
    outside = git_repository(tmp_path / "elsewhere")
    (code_root / "link").symlink_to(outside)

    for path in (code_root / "link", f"{code_root}/../elsewhere"):
        response = register(staff_client, workspace, path)
        assert response.status_code == 200
        assert "is outside the directories repositories may be registered in" in response.text, path
    assert not Repository.objects.exists()


def test_without_configured_roots_only_a_superuser_registers_repositories(
    staff_client, superuser_client, workspace, settings, tmp_path
):
    settings.KANDEV_REPOSITORY_ROOTS = []
    repository = git_repository(tmp_path / "shop")

    refused = register(staff_client, workspace, repository)
    assert "No directories are set for workspace admins&#x27; repositories (KANDEV_REPOSITORY_ROOTS)" in refused.text
    assert not Repository.objects.exists()
    assert register(superuser_client, workspace, repository).status_code == 302


def test_another_workspaces_repository_or_a_worktree_is_refused_for_an_admin(
    staff_client, workspace, theirs, code_root, settings
):
    shop = git_repository(code_root / "shop")
    Repository.objects.filter(pk=theirs[2].pk).update(path=str(shop))
    settings.KANDEV_WORKTREE_ROOT = code_root / "worktrees"
    worktree = git_repository(code_root / "worktrees" / "task-1")

    for path in (shop, shop / ".", worktree):
        response = register(staff_client, workspace, path)
        assert response.status_code == 200
        assert "another workspace&#x27;s repository or a task&#x27;s worktree, or holds one." in response.text, path
    assert not Repository.objects.filter(workspace=workspace).exists()


def test_on_an_executor_host_the_top_level_git_resolves_there_is_checked(staff_client, workspace, code_root, tmp_path):
    """The executor is scripts/test's sshd on this machine: its paths are this machine's, reached over SSH."""
    executor = Executor.objects.create(name="gpu-1", **ssh_test_host_fields())
    executor.workspaces.add(workspace)
    inside = git_repository(code_root / "shop")
    outside = git_repository(tmp_path / "elsewhere")
    (code_root / "link").symlink_to(outside)

    def register_there(path, name):
        data = {"name": name, "path": str(path), "default_branch": "", "executor": executor.pk}
        return staff_client.post(SETTINGS.format(workspace.pk) + "repositories/", data)

    refused = register_there(code_root / "link", "linked")
    assert f"{outside} is outside the directories repositories may be registered in" in refused.text
    assert register_there(inside, "shop").status_code == 302
    assert list(Repository.objects.values_list("path", "executor")) == [(str(inside), executor.pk)]


def test_an_admin_puts_profiles_and_repositories_only_on_the_executors_granted_to_their_workspace(
    staff_client, workspace, theirs
):
    """An executor is the deployment's: its superusers say which workspaces may run there."""
    ours = Executor.objects.create(name="gpu-ours", **unreachable_ssh_host())
    ours.workspaces.add(workspace)
    other = Executor.objects.create(name="gpu-theirs", **unreachable_ssh_host())
    other.workspaces.add(theirs[0])
    profile = {"name": "Mock", "agent_id": "mock", "command": "true", "env": "", "working_dir": "", "auth_method": ""}
    settings_of_ours = SETTINGS.format(workspace.pk)

    form = staff_client.get(settings_of_ours + "agents/").text
    assert "gpu-ours" in form
    assert "gpu-theirs" not in form
    refused = staff_client.post(settings_of_ours + "agents/new/", profile | {"executor": other.pk})
    assert "Select a valid choice" in refused.text
    repository = {"name": "shop", "path": "/srv/code/shop", "default_branch": "", "executor": other.pk}
    assert "Select a valid choice" in staff_client.post(settings_of_ours + "repositories/", repository).text
    assert not AgentProfile.objects.filter(workspace=workspace).exists()
    assert not Repository.objects.filter(workspace=workspace).exists()

    accepted = staff_client.post(settings_of_ours + "agents/new/", profile | {"executor": ours.pk})
    assert accepted.status_code == 302
    assert AgentProfile.objects.get(workspace=workspace).executor == ours


def test_the_executor_command_grants_the_workspaces_it_names_and_those_of_the_profiles_it_assigns(workspace, theirs):
    AgentProfile.objects.create(workspace=workspace, name="Claude", agent_id="claude-acp", command=["claude"])
    ssh = ["--ssh", "kandev@gpu-2.lan:2222", "--host-key", STRANGER_HOST_KEY]
    call_command("executor", "gpu-2", *ssh, "--assign", "Claude", "--workspace", workspace.name, stdout=io.StringIO())
    assert list(Executor.objects.get(name="gpu-2").workspaces.all()) == [workspace]
    call_command("executor", "gpu-2", *ssh, "--workspace", theirs[0].name, stdout=io.StringIO())
    assert set(Executor.objects.get(name="gpu-2").workspaces.all()) == {workspace, theirs[0]}
    with pytest.raises(CommandError, match="No workspace is named Nowhere"):
        call_command("executor", "gpu-2", *ssh, "--workspace", "Nowhere")


def test_a_relative_root_is_a_configuration_error_that_names_the_setting(settings):
    settings.KANDEV_REPOSITORY_ROOTS = ["srv/code"]
    with pytest.raises(ImproperlyConfigured, match="KANDEV_REPOSITORY_ROOTS: 'srv/code' is not an absolute path"):
        roots.configured_roots()


segment = st.sampled_from(["a", "b", "ab", "..", ".", "", "c d"])
absolute = st.lists(segment, max_size=6).map(lambda parts: "/" + "/".join(parts))


@given(path=absolute, root=absolute)
def test_inside_agrees_with_the_path_components(path, root):
    def parts(text):
        # What the kernel would do with "..", ".", and empty segments, without a file system.
        return os.path.normpath("/" + text.lstrip("/")).split("/")[1:]

    path_parts, root_parts = [p for p in parts(path) if p], [p for p in parts(root) if p]
    assert roots.inside(path, root) == (path_parts[: len(root_parts)] == root_parts)
    assert roots.overlaps(path, root) == roots.overlaps(root, path)


def test_a_sibling_with_the_same_prefix_is_not_inside():
    assert not roots.inside("/srv/code-other/shop", "/srv/code")
    assert roots.inside("//srv/code/shop", "/srv/code")


# The migration ----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_migration_makes_staff_admins_of_the_workspaces_they_are_in_and_keeps_every_membership():
    old = migrate([("board", "0002_task_description_limit")])
    users, workspaces = old.get_model("auth", "User"), old.get_model("board", "Workspace")
    root = users.objects.create(username="root", is_staff=True)
    bob = users.objects.create(username="bob")
    mine, theirs = workspaces.objects.create(name="Mine"), workspaces.objects.create(name="Theirs")
    mine.members.add(root, bob)
    theirs.members.add(bob)

    migrate([("board", "0004_staff_become_admins")])

    roles = {
        (m.user.username, m.workspace.name): m.role for m in Membership.objects.select_related("user", "workspace")
    }
    assert roles == {("root", "Mine"): Role.ADMIN, ("bob", "Mine"): Role.MEMBER, ("bob", "Theirs"): Role.MEMBER}
    root_now = get_user_model().objects.get(username="root")
    assert list(Workspace.objects.administered_by(root_now).values_list("name", flat=True)) == ["Mine"]


@pytest.mark.django_db(transaction=True)
def test_the_migration_grants_every_executor_there_was_to_every_workspace_there_was():
    """Until then any workspace could run on any executor: what worked keeps working."""
    old = migrate([("agents", "0002_content_types")])
    old.get_model("agents", "Executor").objects.create(name="gpu-1", host="gpu-1.lan")
    for name in ("Mine", "Theirs"):
        old.get_model("board", "Workspace").objects.create(name=name)

    migrate([("agents", "0003_executor_workspaces")])

    granted = Executor.objects.get(name="gpu-1").workspaces.values_list("name", flat=True)
    assert sorted(granted) == ["Mine", "Theirs"]


# Memberships changed row by row ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_membership_row_made_or_ended_tells_that_operators_open_pages_at_once():
    """The admin site's membership inline saves rows, not ``members``: open pages must still check again."""
    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer

    from kandev_web.live import user_group

    @sync_to_async
    def setup():
        return Workspace.objects.create(name="Ops"), get_user_model().objects.create_user("alice")

    workspace, alice = await setup()
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(user_group(alice.pk), channel)

    for change in (
        lambda: Membership.objects.create(workspace=workspace, user=alice, role=Role.ADMIN),
        lambda: Membership.objects.filter(workspace=workspace, user=alice).delete(),
    ):
        await sync_to_async(change)()
        message = await asyncio.wait_for(layer.receive(channel), 2)
        assert message["type"] == "access.changed"
