"""Executors are granted to workspaces; each one there before is granted to every workspace.

Until now any workspace's profiles and repositories could run on any executor:
granting each to every workspace keeps what worked working, and a superuser
narrows it from there (the admin, or ``manage.py executor --workspace``).
"""

from django.db import migrations, models


def grant_every_workspace(apps, schema_editor):
    Executor = apps.get_model("agents", "Executor")
    Workspace = apps.get_model("board", "Workspace")
    workspaces = list(Workspace.objects.all())
    for executor in Executor.objects.all():
        executor.workspaces.add(*workspaces)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0002_content_types"),
        ("board", "0004_staff_become_admins"),
    ]

    operations = [
        migrations.AddField(
            model_name="executor",
            name="workspaces",
            field=models.ManyToManyField(
                blank=True,
                help_text="Whose agent profiles and repositories may run on it.",
                related_name="executors",
                to="board.workspace",
                verbose_name="workspaces",
            ),
        ),
        migrations.RunPython(grant_every_workspace, migrations.RunPython.noop),
    ]
