"""Staff used to manage every workspace's settings; now a workspace's admins do.

Each staff member becomes an admin of the workspaces they already belong to,
and of no other: what they managed before, minus the workspaces they were
never in (which the settings pages already refused them). Going back leaves
the roles in place: the column goes with ``0003`` anyway.
"""

from django.db import migrations


def staff_become_admins(apps, schema_editor):
    Membership = apps.get_model("board", "Membership")
    Membership.objects.filter(user__is_staff=True).update(role="admin")


class Migration(migrations.Migration):
    dependencies = [("board", "0003_membership_role")]

    operations = [migrations.RunPython(staff_become_admins, migrations.RunPython.noop)]
