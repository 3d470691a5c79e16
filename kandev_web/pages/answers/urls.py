from django.urls import path

from . import views

app_name = "clarifications"
urlpatterns = [
    path("clarifications/<str:pending_id>/respond/", views.respond, name="respond"),
]
