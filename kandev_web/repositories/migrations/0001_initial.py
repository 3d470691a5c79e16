"""Repository and Worktree, moved here from the sessions app (``agent_sessions``): in the state only.

Their tables and constraints were made by ``agent_sessions`` and keep their
names (``db_table``), so nothing in the database changes; ``agent_sessions.0016``
forgets its own copies.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("agents", "0001_initial"),
        ("board", "0002_task_description_limit"),
        ("agent_sessions", "0015_retire_executor_service"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Repository",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=200, verbose_name="name")),
                        (
                            "path",
                            models.CharField(
                                help_text="The repository's absolute path on its machine.",
                                max_length=500,
                                verbose_name="path",
                            ),
                        ),
                        (
                            "default_branch",
                            models.CharField(
                                blank=True,
                                help_text="Where a task's branch starts unless the task names another; empty: detected from the repository.",
                                max_length=200,
                                verbose_name="default branch",
                            ),
                        ),
                        (
                            "executor",
                            models.ForeignKey(
                                blank=True,
                                help_text="The machine the repository is on; empty: the web machine.",
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="repositories",
                                to="agents.executor",
                                verbose_name="executor",
                            ),
                        ),
                        (
                            "workspace",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="repositories",
                                to="board.workspace",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name_plural": "repositories",
                        "db_table": "agent_sessions_repository",
                        "ordering": ["name", "pk"],
                    },
                ),
                migrations.CreateModel(
                    name="Worktree",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "base_branch",
                            models.CharField(
                                blank=True,
                                help_text="Empty: the repository's default branch.",
                                max_length=200,
                                verbose_name="base branch",
                            ),
                        ),
                        ("branch", models.CharField(blank=True, max_length=250, verbose_name="branch")),
                        ("path", models.CharField(blank=True, max_length=1000, verbose_name="path")),
                        ("base_commit", models.CharField(blank=True, max_length=64)),
                        ("created_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "repository",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="worktrees",
                                to="repositories.repository",
                            ),
                        ),
                        (
                            "task",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE, related_name="worktree", to="board.task"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agent_sessions_worktree",
                    },
                ),
                migrations.AddConstraint(
                    model_name="repository",
                    constraint=models.UniqueConstraint(fields=("workspace", "name"), name="unique_repository_name"),
                ),
                migrations.AddConstraint(
                    model_name="worktree",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("branch", ""), _negated=True),
                        fields=("repository", "branch"),
                        name="unique_worktree_branch",
                    ),
                ),
            ],
        ),
    ]
