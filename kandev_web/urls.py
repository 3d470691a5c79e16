from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.decorators.http import require_http_methods

from kandev_web import health, web_app
from kandev_web.pages.task import urls as task_urls
from kandev_web.pages.workspace_settings import urls as settings_urls

urlpatterns = [
    # Django's form views take PUT as POST: the login form is posted, nothing else.
    path("login/", require_http_methods(["GET", "POST"])(auth_views.LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    # The operator menu's language switch: a POST that sets the language cookie.
    path("i18n/", include("django.conf.urls.i18n")),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="metrics"),
    path("manifest.webmanifest", web_app.manifest, name="web-manifest"),
    path("", include("kandev_web.flags.urls")),
    # One namespace for the task page and the agents' and repositories' settings pages: older than the pages app.
    path("", include((task_urls.urlpatterns + settings_urls.urlpatterns, "sessions"))),
    path("", include("kandev_web.pages.answers.urls")),
    path("", include("kandev_web.notifications.urls")),
    path("", include("kandev_web.pages.inbox.urls")),
    path("", include("kandev_web.pages.usage.urls")),
    path("", include("kandev_web.pages.review.urls")),
    path("", include("kandev_web.webhooks.urls")),
    path("", include("kandev_web.pages.board.urls")),
]
