"""The libraries a kandev-web server or manage worker imports, imported once by the fork server (``forked.py``).

Only libraries: none of them reads the environment a child is given, nor
configures Django's settings, which each child does with its own.
"""

# Imported to be in memory before the fork, not to be used here:
# ruff: noqa: F401

import sys

import asyncssh
import autobahn.twisted.websocket
import channels.auth
import channels.generic.websocket
import channels.routing
import cryptography.fernet
import daphne.http_protocol  # not daphne.server: it installs Twisted's reactor on import
import daphne.ws_protocol
import django.contrib.admin
import django.core.handlers.asgi
import django.core.management
import django.db.models
import django.forms
import django.template
import django.urls
import environ
import jsonschema
import mcp.server.mcpserver  # what kandev_web.clarifications.mcp imports on an agent's first call
import mcp.server.transport_security
import prometheus_client
import psycopg
import pythonjsonlogger.json
import requests
import starlette.applications
import twisted.internet.asyncioreactor
import whitenoise.middleware
from django.conf import settings

if settings.configured or "twisted.internet.reactor" in sys.modules:
    raise RuntimeError("the fork server must not configure Django nor install a reactor: each child does")
