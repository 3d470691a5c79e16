"""agentctl tokens and executor hosts' tokens, sealed with ``KANDEV_SECRETS_KEY``.

Read access to the database was enough to run commands on an agent host: an
agentctl or executor token starts and drives agents. The columns become
``SealedTextField`` (text: a sealed token is longer), then every stored
token is sealed in place. The values are read and written as raw text here,
because the field itself would try to open the clear ones.
"""

from django.conf import settings
from django.db import migrations

import kandev_web.agents.models
from kandev_web.secret_box import SecretBox

COLUMNS = [("AgentExecution", "token"), ("Executor", "token")]


def _convert(apps, schema_editor, change):
    connection = schema_editor.connection
    for model_name, column in COLUMNS:
        table = connection.ops.quote_name(apps.get_model("agent_sessions", model_name)._meta.db_table)
        quoted = connection.ops.quote_name(column)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id, {quoted} FROM {table} WHERE {quoted} <> ''")  # noqa: S608 - names, not input
            rows = cursor.fetchall()
            for pk, value in rows:
                cursor.execute(f"UPDATE {table} SET {quoted} = %s WHERE id = %s", [change(column, value), pk])  # noqa: S608


def seal(apps, schema_editor):
    box = SecretBox(settings.KANDEV_SECRETS_KEYS)
    _convert(apps, schema_editor, lambda name, value: box.seal(value))


def open_again(apps, schema_editor):
    box = SecretBox(settings.KANDEV_SECRETS_KEYS)
    _convert(apps, schema_editor, box.open)


class Migration(migrations.Migration):
    dependencies = [
        ("agent_sessions", "0012_agent_profile_secret_env"),
    ]

    operations = [
        migrations.AlterField(
            model_name="agentexecution",
            name="token",
            field=kandev_web.agents.models.SealedTextField(blank=True),
        ),
        migrations.AlterField(
            model_name="executor",
            name="token",
            field=kandev_web.agents.models.SealedTextField(
                help_text="The KANDEV_EXECUTOR_TOKEN it was started with.", verbose_name="token"
            ),
        ),
        migrations.RunPython(seal, open_again),
    ]
