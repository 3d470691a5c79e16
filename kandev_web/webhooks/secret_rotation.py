"""Webhooks' signing secrets, sealed again with the first key (``manage.py rotate_secrets``)."""

from kandev_web.secret_box import SecretBox, SecretUnreadable

from .models import Webhook


def rotate(box: SecretBox) -> tuple[int, list[str]]:
    """Seal every webhook's secret again with ``box``'s first key: how many, and those no key opens."""
    rotated, unreadable = 0, []
    for webhook in Webhook.objects.all():
        try:
            sealed = box.rotate(f"webhook {webhook.pk}", webhook.secret)
        except SecretUnreadable:
            unreadable.append(f"webhook {webhook.name} ({webhook.pk})")
            continue
        # One UPDATE: a webhook added or removed meanwhile is not written back.
        Webhook.objects.filter(pk=webhook.pk, secret=webhook.secret).update(secret=sealed)
        rotated += 1
    return rotated, unreadable
