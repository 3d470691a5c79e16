"""The libraries a kandev-web server or manage worker imports, imported once by the fork server (``forked.py``).

Only libraries: none of them reads the environment a child is given, nor
configures Django's settings, which each child does with its own.
"""

import sys

import asyncssh  # noqa: F401
import autobahn.twisted.websocket  # noqa: F401
import channels.auth
import channels.generic.websocket
import channels.routing  # noqa: F401
import cryptography.fernet  # noqa: F401
import daphne.http_protocol  # not daphne.server: it installs Twisted's reactor on import
import daphne.ws_protocol  # noqa: F401
import django.contrib.admin
import django.core.handlers.asgi
import django.core.management
import django.db.models
import django.forms
import django.template
import django.urls  # noqa: F401
import environ  # noqa: F401
import jsonschema  # noqa: F401
import prometheus_client  # noqa: F401
import psycopg  # noqa: F401
import pythonjsonlogger.json  # noqa: F401
import requests  # noqa: F401
import twisted.internet.asyncioreactor  # noqa: F401
import whitenoise.middleware  # noqa: F401
from django.conf import settings

if settings.configured or "twisted.internet.reactor" in sys.modules:
    raise RuntimeError("the fork server must not configure Django nor install a reactor: each child does")
