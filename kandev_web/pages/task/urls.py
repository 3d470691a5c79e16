"""The task page and the operator's session actions.

Named in the ``sessions`` namespace with the settings pages of agents and
repositories (``kandev_web.urls``), as they were before the task page moved here.
"""

from django.urls import path

from . import views

urlpatterns = [
    path("tasks/<int:task_id>/", views.task_detail, name="task"),
    path("tasks/<int:task_id>/sessions/", views.session_start, name="start"),
    path("tasks/<int:task_id>/budget/", views.task_budget, name="budget"),
    path("tasks/<int:task_id>/steps/<int:step_id>/rows/", views.task_list_more, name="task-list-more"),
    path("sessions/<int:session_id>/prompt/", views.session_prompt, name="prompt"),
    path("sessions/<int:session_id>/cancel/", views.session_cancel, name="cancel"),
    path("sessions/<int:session_id>/mode/", views.session_mode, name="mode"),
    path("sessions/<int:session_id>/option/", views.session_option, name="option"),
    path("sessions/<int:session_id>/stop/", views.session_stop, name="stop"),
    path("sessions/<int:session_id>/resume/", views.session_resume, name="resume"),
    path(
        "sessions/<int:session_id>/permissions/<str:pending_id>/",
        views.permission_respond,
        name="permission-respond",
    ),
]
