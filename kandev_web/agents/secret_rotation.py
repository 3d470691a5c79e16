"""This app's secrets at rest, sealed again with the first key (``manage.py rotate_secrets``).

Agent profiles' secrets and executor hosts' SSH private keys.
"""

from django.db import transaction

from kandev_web.secret_box import SecretBox, SecretUnreadable

from .models import AgentProfile, Executor, reseal


def rotate(box: SecretBox) -> tuple[int, list[str]]:
    """Seal every secret of this app again with ``box``'s first key: how many, and those no key opens."""
    rotated, unreadable = 0, []
    for profile_id in AgentProfile.objects.values_list("pk", flat=True):
        with transaction.atomic():
            profile = AgentProfile.objects.select_for_update().get(pk=profile_id)
            sealed = {}
            for name, token in profile.secret_env.items():
                try:
                    sealed[name] = box.rotate(name, token)
                    rotated += 1
                except SecretUnreadable:
                    sealed[name] = token
                    unreadable.append(f"{profile.name} ({profile.pk}): {name}")
            profile.secret_env = sealed
            profile.save(update_fields=["secret_env"])
    keys, unopened = reseal(Executor, "private_key")
    return rotated + keys, unreadable + unopened
