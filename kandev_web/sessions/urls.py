from django.urls import path

from kandev_web.pages.task import views

from . import profile_views, repository_views

app_name = "sessions"
urlpatterns = [
    path("tasks/<int:task_id>/", views.task_detail, name="task"),
    path("tasks/<int:task_id>/sessions/", views.session_start, name="start"),
    path("tasks/<int:task_id>/steps/<int:step_id>/rows/", views.task_list_more, name="task-list-more"),
    path("sessions/<int:session_id>/prompt/", views.session_prompt, name="prompt"),
    path("sessions/<int:session_id>/cancel/", views.session_cancel, name="cancel"),
    path("sessions/<int:session_id>/stop/", views.session_stop, name="stop"),
    path("settings/workspaces/<int:workspace_id>/agents/", profile_views.profiles, name="profiles"),
    path(
        "settings/workspaces/<int:workspace_id>/repositories/", repository_views.repositories, name="repositories"
    ),
    path(
        "settings/workspaces/<int:workspace_id>/repositories/<int:repository_id>/delete/",
        repository_views.repository_delete,
        name="repository-delete",
    ),
    path("settings/workspaces/<int:workspace_id>/agents/new/", profile_views.profile_new, name="profile-new"),
    path(
        "settings/workspaces/<int:workspace_id>/agents/<int:profile_id>/edit/",
        profile_views.profile_edit,
        name="profile-edit",
    ),
    path(
        "settings/workspaces/<int:workspace_id>/agents/<int:profile_id>/delete/",
        profile_views.profile_delete,
        name="profile-delete",
    ),
    path(
        "settings/workspaces/<int:workspace_id>/agents/<int:profile_id>/check/",
        profile_views.profile_check,
        name="profile-check",
    ),
    path(
        "sessions/<int:session_id>/permissions/<str:pending_id>/",
        views.permission_respond,
        name="permission-respond",
    ),
]
