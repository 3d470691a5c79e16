"""Executor hosts over SSH: host, port, user, the host key, a sealed private key, the agentctl command.

Rows from before have a kandev-executor URL and stay that kind (usable only
with KANDEV_ALLOW_EXECUTOR_SERVICE); url and token are blank for SSH hosts.
"""

from django.db import migrations, models

import kandev_web.agents.models


class Migration(migrations.Migration):
    dependencies = [
        ("agent_sessions", "0013_sealed_tokens"),
    ]

    operations = [
        migrations.AddField(
            model_name="executor",
            name="agentctl",
            field=models.CharField(
                default="kandev-agentctl",
                help_text="kandev-agentctl on that host: a path, or a name on the login's PATH.",
                max_length=500,
                verbose_name="agentctl command",
            ),
        ),
        migrations.AddField(
            model_name="executor",
            name="host",
            field=models.CharField(blank=True, max_length=255, verbose_name="SSH host"),
        ),
        migrations.AddField(
            model_name="executor",
            name="host_key",
            field=models.TextField(
                blank=True,
                help_text="The host's public key, as a known_hosts line (the output of ssh-keyscan -t ed25519 HOST).",
                verbose_name="host key",
            ),
        ),
        migrations.AddField(
            model_name="executor",
            name="port",
            field=models.PositiveIntegerField(default=22, verbose_name="SSH port"),
        ),
        migrations.AddField(
            model_name="executor",
            name="private_key",
            field=kandev_web.agents.models.SealedTextField(
                blank=True,
                help_text="The login's OpenSSH private key; empty uses KANDEV_SSH_KEY_FILE.",
                verbose_name="private key",
            ),
        ),
        migrations.AddField(
            model_name="executor",
            name="user",
            field=models.CharField(blank=True, max_length=100, verbose_name="SSH user"),
        ),
        migrations.AddField(
            model_name="executor",
            name="workdir_root",
            field=models.CharField(
                default="kandev-workdirs",
                help_text="Where agents work there when a profile names no directory; relative to the login's home.",
                max_length=500,
                verbose_name="working directories",
            ),
        ),
        migrations.AddField(
            model_name="executor",
            name="worktree_root",
            field=models.CharField(
                default="kandev-worktrees",
                help_text="Where tasks' worktrees are made there, for its repositories; relative to the login's home.",
                max_length=500,
                verbose_name="worktrees",
            ),
        ),
        migrations.AlterField(
            model_name="executor",
            name="token",
            field=kandev_web.agents.models.SealedTextField(
                blank=True, help_text="kandev-executor only: its KANDEV_EXECUTOR_TOKEN.", verbose_name="token"
            ),
        ),
        migrations.AlterField(
            model_name="executor",
            name="url",
            field=models.CharField(
                blank=True,
                help_text="kandev-executor only: where it listens, e.g. ws://gpu-1:7310/executor/stream.",
                max_length=500,
                verbose_name="URL",
            ),
        ),
    ]
