"""Executor and AgentProfile, moved here from the sessions app (``agent_sessions``): in the state only.

Their tables were made by ``agent_sessions`` and keep their names (``db_table``),
so nothing in the database changes; ``agent_sessions.0016`` points its foreign
keys here and forgets its own copies.
"""

import django.db.models.deletion
from django.db import migrations, models

import kandev_web.agents.models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("board", "0002_task_description_limit"),
        ("agent_sessions", "0015_retire_executor_service"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Executor",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=200, unique=True, verbose_name="name")),
                        ("host", models.CharField(max_length=255, verbose_name="SSH host")),
                        ("port", models.PositiveIntegerField(default=22, verbose_name="SSH port")),
                        ("user", models.CharField(blank=True, max_length=100, verbose_name="SSH user")),
                        (
                            "host_key",
                            models.TextField(
                                blank=True,
                                help_text="The host's public key, as a known_hosts line (the output of ssh-keyscan -t ed25519 HOST).",
                                verbose_name="host key",
                            ),
                        ),
                        (
                            "private_key",
                            kandev_web.agents.models.SealedTextField(
                                blank=True,
                                help_text="The login's OpenSSH private key; empty uses KANDEV_SSH_KEY_FILE.",
                                verbose_name="private key",
                            ),
                        ),
                        (
                            "agentctl",
                            models.CharField(
                                default="kandev-agentctl",
                                help_text="kandev-agentctl on that host: a path, or a name on the login's PATH.",
                                max_length=500,
                                verbose_name="agentctl command",
                            ),
                        ),
                        (
                            "workdir_root",
                            models.CharField(
                                default="kandev-workdirs",
                                help_text="Where agents work there when a profile names no directory; relative to the login's home.",
                                max_length=500,
                                verbose_name="working directories",
                            ),
                        ),
                        (
                            "worktree_root",
                            models.CharField(
                                default="kandev-worktrees",
                                help_text="Where tasks' worktrees are made there, for its repositories; relative to the login's home.",
                                max_length=500,
                                verbose_name="worktrees",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agent_sessions_executor",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="AgentProfile",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=200, verbose_name="name")),
                        (
                            "agent_id",
                            models.CharField(
                                help_text="The agent's registry id, e.g. claude-acp.",
                                max_length=100,
                                verbose_name="agent id",
                            ),
                        ),
                        (
                            "command",
                            models.JSONField(help_text="argv, as a JSON list of strings.", verbose_name="command"),
                        ),
                        ("env", models.JSONField(blank=True, default=dict, verbose_name="environment")),
                        (
                            "secret_env",
                            models.JSONField(blank=True, default=dict, editable=False, verbose_name="secrets"),
                        ),
                        ("working_dir", models.CharField(blank=True, max_length=500, verbose_name="working directory")),
                        (
                            "mcp_servers",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text='Further MCP servers the agent is given when a session starts, beside Kandev\'s own: a JSON list of ACP McpServer objects, e.g. {"name": "docs", "command": "/usr/bin/docs-mcp", "args": [], "env": []}.',
                                validators=[kandev_web.agents.models.validate_mcp_servers],
                                verbose_name="MCP servers",
                            ),
                        ),
                        (
                            "auth_method",
                            models.CharField(
                                blank=True,
                                help_text="The id of the ACP auth method Kandev signs in with before it opens a session, from those the agent offers (e.g. gemini-api-key); empty signs in only when the agent asks and one needs nobody.",
                                max_length=200,
                                verbose_name="auth method",
                            ),
                        ),
                        (
                            "last_check",
                            models.JSONField(blank=True, default=dict, editable=False, verbose_name="last check"),
                        ),
                        (
                            "checked_at",
                            models.DateTimeField(blank=True, editable=False, null=True, verbose_name="checked at"),
                        ),
                        (
                            "workspace",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="agent_profiles",
                                to="board.workspace",
                            ),
                        ),
                        (
                            "executor",
                            models.ForeignKey(
                                blank=True,
                                help_text="The machine the agent runs on; empty runs it on the web machine that starts it.",
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="agent_profiles",
                                to="agents.executor",
                                verbose_name="executor",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agent_sessions_agentprofile",
                        "ordering": ["name", "pk"],
                    },
                ),
            ],
        ),
    ]
