"""This app's secrets at rest, sealed again with the first key (``manage.py rotate_secrets``): agentctl tokens."""

from kandev_web.secret_box import SecretBox

from .models import AgentExecution


def rotate(box: SecretBox) -> tuple[int, list[str]]:
    """Seal every agentctl token again with ``box``'s first key: how many, and those no key opens."""
    rotated, unreadable = 0, []
    # Read opened with whichever key sealed it (SealedTextField); saved, sealed with the first.
    for execution in AgentExecution.objects.exclude(token="").iterator():
        if execution.token:
            execution.save(update_fields=["token"])
            rotated += 1
        else:
            unreadable.append(f"AgentExecution {execution.pk}: token")
    return rotated, unreadable
