"""Executor, AgentProfile, Repository and Worktree now belong to the agents and repositories apps: state only.

Their tables stay as they are (the new apps name them with ``db_table``);
this app's foreign keys to them are pointed at the new apps, and its own
copies forgotten.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agent_sessions", "0015_retire_executor_service"),
        ("agents", "0001_initial"),
        ("repositories", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="tasksession",
                    name="agent_profile",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="sessions",
                        to="agents.agentprofile",
                    ),
                ),
                migrations.AlterField(
                    model_name="agentexecution",
                    name="executor",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="agents.executor",
                    ),
                ),
                migrations.RemoveField(
                    model_name="agentprofile",
                    name="executor",
                ),
                migrations.RemoveField(
                    model_name="agentprofile",
                    name="workspace",
                ),
                migrations.RemoveConstraint(
                    model_name="repository",
                    name="unique_repository_name",
                ),
                migrations.RemoveConstraint(
                    model_name="worktree",
                    name="unique_worktree_branch",
                ),
                migrations.DeleteModel(
                    name="AgentProfile",
                ),
                migrations.RemoveField(
                    model_name="repository",
                    name="executor",
                ),
                migrations.RemoveField(
                    model_name="repository",
                    name="workspace",
                ),
                migrations.RemoveField(
                    model_name="worktree",
                    name="repository",
                ),
                migrations.RemoveField(
                    model_name="worktree",
                    name="task",
                ),
                migrations.DeleteModel(
                    name="Executor",
                ),
                migrations.DeleteModel(
                    name="Repository",
                ),
                migrations.DeleteModel(
                    name="Worktree",
                ),
            ],
        ),
    ]
