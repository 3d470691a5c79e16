"""The floor's Django: no database, no middleware, the stock in-memory channel layer.

With ``KANDEV_BENCH_FLOOR_REDIS_URL`` set (the several-machines profile), the
stock Redis channel layer instead, under ``KANDEV_BENCH_FLOOR_PREFIX``: the
floor then runs in two processes, the trigger's ``group_send`` crossing Redis
to the page's process, as a question's overlay does between web processes.

Static files are the repository's ``static/``, so the page loads the very htmx
and ws extension files the product vendors.
"""

import os
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
if os.environ.get("KANDEV_BENCH_FLOOR_REDIS_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [os.environ["KANDEV_BENCH_FLOOR_REDIS_URL"]],
                "prefix": os.environ.get("KANDEV_BENCH_FLOOR_PREFIX", "floor"),
            },
        }
    }
DATABASES: dict = {}
STATIC_URL = "/static/"
STATICFILES_DIRS = [ROOT / "static"]
USE_TZ = True
