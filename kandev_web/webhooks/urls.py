from django.urls import path

from . import views

app_name = "webhooks"
prefix = "settings/workspaces/<int:workspace_id>/webhooks/"
urlpatterns = [
    path(prefix, views.webhooks, name="list"),
    path(f"{prefix}new/", views.webhook_new, name="new"),
    path(f"{prefix}<int:webhook_id>/active/", views.webhook_active, name="active"),
    path(f"{prefix}<int:webhook_id>/delete/", views.webhook_delete, name="delete"),
    path(f"{prefix}<int:webhook_id>/test/", views.webhook_test, name="test"),
    path(f"{prefix}<int:webhook_id>/log/", views.webhook_log, name="log"),
]
