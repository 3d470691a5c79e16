"""The floor's Django: no database, no middleware, the stock in-memory channel layer.

Static files are the repository's ``static/``, so the page loads the very htmx
and ws extension files the product vendors.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SECRET_KEY = "framework-floor-benchmark-only"  # loopback only, and nothing is signed
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["channels", "django.contrib.staticfiles"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "benchmarks.floor.app"
ASGI_APPLICATION = "benchmarks.floor.asgi.application"
# Stock Channels, not kandev-web's layer: the floor is the framework as shipped.
CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
DATABASES: dict = {}
STATIC_URL = "/static/"
STATICFILES_DIRS = [ROOT / "static"]
USE_TZ = True
