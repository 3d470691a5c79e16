"""Seal every secret at rest again with the first key of ``KANDEV_SECRETS_KEY``.

Agent profiles' secrets, webhooks' signing secrets, executor hosts' SSH private keys, agentctl tokens.

Rotating a key: put the new key first (``KANDEV_SECRETS_KEY=<new>,<old>``),
restart, run this, then drop the old key. A secret no configured key opens is
named, left as it is, and makes the command fail, so the old key is not
dropped while something still needs it.
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from kandev_web.secret_box import SecretUnreadable
from kandev_web.sessions.models import AgentExecution, AgentProfile, Executor, secret_box
from kandev_web.webhooks.models import Webhook


class Command(BaseCommand):
    help = "Re-encrypt every secret and token at rest with the first key of KANDEV_SECRETS_KEY."

    def handle(self, *args, **options):
        box = secret_box()
        rotated, unreadable = 0, []
        for profile_id in AgentProfile.objects.values_list("pk", flat=True):
            with transaction.atomic():
                profile = AgentProfile.objects.select_for_update().get(pk=profile_id)
                sealed = {}
                for name, token in profile.secret_env.items():
                    try:
                        sealed[name] = box.rotate(name, token)
                        rotated += 1
                    except SecretUnreadable:
                        sealed[name] = token
                        unreadable.append(f"{profile.name} ({profile.pk}): {name}")
                profile.secret_env = sealed
                profile.save(update_fields=["secret_env"])
        for webhook in Webhook.objects.all():
            try:
                sealed = box.rotate(f"webhook {webhook.pk}", webhook.secret)
            except SecretUnreadable:
                unreadable.append(f"webhook {webhook.name} ({webhook.pk})")
                continue
            # One UPDATE: a webhook added or removed meanwhile is not written back.
            Webhook.objects.filter(pk=webhook.pk, secret=webhook.secret).update(secret=sealed)
            rotated += 1
        for model, field in ((Executor, "private_key"), (AgentExecution, "token")):
            # Read opened with whichever key sealed it; saved, sealed with the first.
            for row in model.objects.exclude(**{field: ""}).iterator():
                if getattr(row, field):
                    row.save(update_fields=[field])
                    rotated += 1
                else:
                    unreadable.append(f"{model.__name__} {row.pk}: {field}")
        self.stdout.write(f"Re-encrypted {rotated} secret(s) with the first key of KANDEV_SECRETS_KEY.")
        if unreadable:
            raise CommandError(
                "No key of KANDEV_SECRETS_KEY opens these secrets; they were left as they are: " + "; ".join(unreadable)
            )
