"""Agent profiles' secrets, sealed; credentials found in clear in ``env`` move there.

The rule, frozen here as the release applied it (docs/decisions/operator.md#secrets-at-rest):
a variable whose name, case aside, ends in ``KEY``, ``APIKEY`` or ``TOKEN``
(the whole name, or after an ``_``) or holds ``SECRET``, ``PASSWORD`` or
``PASSWD`` anywhere, and which is a shell name, leaves ``env`` and is sealed
with the first key of ``KANDEV_SECRETS_KEY``. Going back opens them into
``env`` again.
"""

import re

from django.conf import settings
from django.db import migrations, models

from kandev_web.secret_box import SecretBox

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CREDENTIAL = re.compile(r"(?:^|_)(?:(?:API)?KEY|TOKEN)$|SECRET|PASSWORD|PASSWD", re.IGNORECASE)


def seal_credentials(apps, schema_editor):
    box = SecretBox(settings.KANDEV_SECRETS_KEYS)
    AgentProfile = apps.get_model("agent_sessions", "AgentProfile")
    for profile in AgentProfile.objects.all():
        env = profile.env if isinstance(profile.env, dict) else {}
        moving = {name for name in env if NAME.fullmatch(name) and CREDENTIAL.search(name)}
        if not moving:
            continue
        profile.secret_env = {**profile.secret_env, **{name: box.seal(str(env[name])) for name in moving}}
        profile.env = {name: value for name, value in env.items() if name not in moving}
        profile.save(update_fields=["env", "secret_env"])


def open_into_env(apps, schema_editor):
    box = SecretBox(settings.KANDEV_SECRETS_KEYS)
    AgentProfile = apps.get_model("agent_sessions", "AgentProfile")
    for profile in AgentProfile.objects.all():
        if not profile.secret_env:
            continue
        profile.env = {**profile.env, **box.open_all(profile.secret_env)}
        profile.secret_env = {}
        profile.save(update_fields=["env", "secret_env"])


class Migration(migrations.Migration):
    dependencies = [
        ("agent_sessions", "0011_agent_profile_last_check"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentprofile",
            name="secret_env",
            field=models.JSONField(blank=True, default=dict, editable=False, verbose_name="secrets"),
        ),
        migrations.RunPython(seal_credentials, open_into_env),
    ]
