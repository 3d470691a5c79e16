"""The kandev-executor service is gone: its rows become SSH hosts to complete, and its url and token go.

A row registered by URL keeps its name, and with it the agent profiles and
repositories that point at it; its host becomes the URL's host name. With no
user and no host key recorded, nothing contacts it (sessions on it fail
saying no host key is recorded) until an operator completes it, in the admin
or with ``manage.py executor NAME --ssh USER@HOST --host-key ...``. The
sealed token goes with its column: nothing may use it any more.
"""

from urllib.parse import urlsplit

from django.db import migrations, models


def to_ssh_hosts(apps, schema_editor):
    Executor = apps.get_model("agent_sessions", "Executor")
    # values_list and update: the sealed token is never opened on the way out.
    for pk, url in Executor.objects.exclude(url="").values_list("pk", "url"):
        Executor.objects.filter(pk=pk).update(host=urlsplit(url).hostname or "")


class Migration(migrations.Migration):
    dependencies = [
        ("agent_sessions", "0014_executor_ssh"),
    ]

    operations = [
        # Back again, the columns return empty: the hosts stay SSH hosts.
        migrations.RunPython(to_ssh_hosts, migrations.RunPython.noop),
        migrations.RemoveField(model_name="executor", name="token"),
        migrations.RemoveField(model_name="executor", name="url"),
        migrations.AlterField(
            model_name="executor",
            name="host",
            field=models.CharField(max_length=255, verbose_name="SSH host"),
        ),
    ]
