from django.urls import path

from . import views

app_name = "notifications"
urlpatterns = [
    path("settings/notifications/", views.notification_settings, name="settings"),
    path("settings/notifications/<str:event>/", views.notification_setting_set, name="set"),
]
