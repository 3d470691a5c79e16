from django.urls import path

from . import views

app_name = "sessions"
urlpatterns = [
    path("tasks/<int:task_id>/", views.task_detail, name="task"),
]
