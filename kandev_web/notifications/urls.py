from django.urls import path

from . import views

app_name = "notifications"
urlpatterns = [
    path("settings/notifications/", views.notification_settings, name="settings"),
    path("settings/notifications/push/", views.push_subscribe, name="push_subscribe"),
    path("settings/notifications/push/remove/", views.push_unsubscribe, name="push_unsubscribe"),
    path("settings/notifications/<str:event>/", views.notification_setting_set, name="set"),
    path("sw.js", views.service_worker, name="service_worker"),
]
