"""Seal every secret at rest again with the first key of ``KANDEV_SECRETS_KEY``.

Agent profiles' secrets, webhooks' signing secrets, executor hosts' SSH private keys, agentctl tokens:
each app that holds secrets says how to seal them again in its ``secret_rotation`` module (found the way the
admin finds ``admin`` modules), so this command knows no app but the one it ships in.

Rotating a key: put the new key first (``KANDEV_SECRETS_KEY=<new>,<old>``),
restart, run this, then drop the old key. A secret no configured key opens is
named, left as it is, and makes the command fail, so the old key is not
dropped while something still needs it.
"""

from importlib import import_module

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.utils.module_loading import module_has_submodule

from kandev_web.agents.models import secret_box

MODULE = "secret_rotation"


class Command(BaseCommand):
    help = "Re-encrypt every secret and token at rest with the first key of KANDEV_SECRETS_KEY."

    def handle(self, *args, **options):
        box = secret_box()
        rotated, unreadable = 0, []
        for config in apps.get_app_configs():
            if module_has_submodule(config.module, MODULE):
                count, names = import_module(f"{config.name}.{MODULE}").rotate(box)
                rotated += count
                unreadable += names
        self.stdout.write(f"Re-encrypted {rotated} secret(s) with the first key of KANDEV_SECRETS_KEY.")
        if unreadable:
            raise CommandError(
                "No key of KANDEV_SECRETS_KEY opens these secrets; they were left as they are: " + "; ".join(unreadable)
            )
