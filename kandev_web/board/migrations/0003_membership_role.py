"""Workspace membership gets a role: the many-to-many table becomes ``Membership``, in place.

The table ``board_workspace_members`` stays as it is (its rows, ids and
unique pair); only Django's idea of it changes, and one column is added.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MEMBERSHIP_STATE = migrations.CreateModel(
    name="Membership",
    fields=[
        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
        (
            "user",
            models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to=settings.AUTH_USER_MODEL
            ),
        ),
        (
            "workspace",
            models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="board.workspace"
            ),
        ),
    ],
    options={
        "verbose_name": "membership",
        "db_table": "board_workspace_members",
        "unique_together": {("workspace", "user")},
    },
)


class Migration(migrations.Migration):
    dependencies = [
        ("board", "0002_task_description_limit"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                MEMBERSHIP_STATE,
                migrations.AlterField(
                    model_name="workspace",
                    name="members",
                    field=models.ManyToManyField(
                        blank=True, related_name="workspaces", through="board.Membership", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="membership",
            name="role",
            field=models.CharField(
                choices=[("member", "Member"), ("admin", "Admin")], default="member", max_length=16, verbose_name="role"
            ),
        ),
    ]
