"""The settings pages of a workspace's agent profiles and repositories.

Named in the ``sessions`` namespace with the task page's (``kandev_web.urls``).
"""

from django.urls import path

from kandev_web.repositories import views as repository_views

from . import profiles

urlpatterns = [
    path("settings/workspaces/<int:workspace_id>/agents/", profiles.profiles, name="profiles"),
    path("settings/workspaces/<int:workspace_id>/repositories/", repository_views.repositories, name="repositories"),
    path(
        "settings/workspaces/<int:workspace_id>/repositories/<int:repository_id>/delete/",
        repository_views.repository_delete,
        name="repository-delete",
    ),
    path(
        "settings/workspaces/<int:workspace_id>/repositories/<int:repository_id>/push-remote/",
        repository_views.repository_push_remote,
        name="repository-push-remote",
    ),
    path("settings/workspaces/<int:workspace_id>/agents/new/", profiles.profile_new, name="profile-new"),
    path(
        "settings/workspaces/<int:workspace_id>/agents/<int:profile_id>/edit/",
        profiles.profile_edit,
        name="profile-edit",
    ),
    path(
        "settings/workspaces/<int:workspace_id>/agents/<int:profile_id>/delete/",
        profiles.profile_delete,
        name="profile-delete",
    ),
    path(
        "settings/workspaces/<int:workspace_id>/agents/<int:profile_id>/check/",
        profiles.profile_check,
        name="profile-check",
    ),
]
