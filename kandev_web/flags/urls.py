from django.urls import path

from . import views

app_name = "flags"
urlpatterns = [
    path("settings/feature-toggles/", views.feature_toggles, name="feature-toggles"),
    path("settings/feature-toggles/<str:key>/", views.feature_toggle_set, name="feature-toggle-set"),
    path("api/v1/runtime-flags", views.api_flags, name="api-flags"),
    path("api/v1/runtime-flags/<str:key>", views.api_flag, name="api-flag"),
]
