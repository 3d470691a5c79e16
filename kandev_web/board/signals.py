"""A change of workspace membership reaches the operator's open pages at once.

Live sockets keep their last access check for a few seconds; this tells the
affected operators' sockets to check again now, so one removed from a
workspace stops hearing it with the next event, not seconds later.
"""

from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver

from kandev_web import live

from .models import Membership, Workspace


@receiver(m2m_changed, sender=Workspace.members.through, dispatch_uid="board.membership_changed")
def membership_changed(sender, instance, action, reverse, pk_set, **kwargs):
    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    if reverse:  # user.workspaces.add(...): ``instance`` is the operator
        user_ids = [instance.pk]
    elif action == "pre_clear":
        user_ids = list(instance.members.values_list("pk", flat=True))
    else:
        user_ids = list(pk_set or ())
    for user_id in user_ids:
        live.access_changed(user_id)


@receiver(post_save, sender=Membership, dispatch_uid="board.membership_saved")
@receiver(post_delete, sender=Membership, dispatch_uid="board.membership_deleted")
def membership_row_changed(sender, instance, **kwargs):
    """A membership made or ended row by row (the admin site's inline), not through ``members``."""
    live.access_changed(instance.user_id)
