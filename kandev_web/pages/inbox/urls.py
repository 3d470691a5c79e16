from django.urls import path

from . import views

app_name = "inbox"
urlpatterns = [
    path("inbox/", views.inbox, name="inbox"),
]
