"""The floor's ASGI application: ``daphne benchmarks.floor.asgi:application``.

Static files are served by Django's ASGI handler (kandev-web's WhiteNoise
adds nothing the floor needs to measure).
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.floor.settings")

from django.core.asgi import get_asgi_application

django_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from .app import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {"http": ASGIStaticFilesHandler(django_app), "websocket": URLRouter(websocket_urlpatterns)}
)
