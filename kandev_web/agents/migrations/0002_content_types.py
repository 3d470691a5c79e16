"""Executor and AgentProfile's content types follow them here from ``agent_sessions``.

Renamed rather than made anew, so the permissions granted on them (and the
admin's history of their rows) stay theirs. A database migrated from empty has
none yet: they are made after ``migrate``, under this app.
"""

from django.db import migrations

MODELS = ("executor", "agentprofile")


def rename(apps, old, new):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in MODELS:
        # Made already under the new label (a migrate run before this one): that row stays, the old one goes stale.
        if not ContentType.objects.filter(app_label=new, model=model).exists():
            ContentType.objects.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    rename(apps, "agent_sessions", "agents")


def backwards(apps, schema_editor):
    rename(apps, "agents", "agent_sessions")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("agents", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
