"""A prod deployment's Web Push identity: one key every web process shares, and a contact push services accept.

Browsers subscribe with the VAPID public key, and a push service refuses a
push signed by any other. Without ``KANDEV_VAPID_PRIVATE_KEY`` each web
process keeps a key of its own in its var directory (``vapid.py``): several
processes (two containers, or one re-created) then each sign with their own,
and about half the pushes fail. Apple's push service also refuses a contact
(``KANDEV_VAPID_SUBJECT``) it cannot reach: ``mailto:kandev@localhost``, the
default without an https ``KANDEV_PUBLIC_URL``. Both refuse to start prod
(``kandev_web.asgi`` runs these checks too) rather than fail push by push.
"""

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks

from kandev_web.sessions.checks import TAG


def _local(host: str) -> bool:
    """A name or address no push service can reach or mail: localhost, a bare name, loopback, private."""
    host = host.strip("[]").lower().rstrip(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host or host.endswith((".localhost", ".local", ".internal", ".test", ".invalid"))
    return not address.is_global


def subject_problem(subject: str) -> str | None:
    """Why push services would refuse ``subject`` as the VAPID contact, or ``None``."""
    if subject.startswith("mailto:"):
        _, at, domain = subject.removeprefix("mailto:").partition("@")
        if not at or not domain or _local(domain):
            return f"{subject!r} is no mail address a push service can write to"
        return None
    if subject.startswith("https://"):
        host = urlsplit(subject).hostname or ""
        if not host or _local(host):
            return f"{subject!r} is no https: URL a push service can reach"
        return None
    return f"{subject!r} is neither an https: URL nor a mailto: address"


@checks.register(TAG)
def check_vapid(app_configs, **kwargs):
    if not settings.IS_PROD:
        return []
    errors = []
    if not settings.KANDEV_VAPID_PRIVATE_KEY.strip():
        errors.append(
            checks.Error(
                "KANDEV_VAPID_PRIVATE_KEY is not set, so each web process would sign Web Push with a key of its "
                "own, kept in its var directory, and browsers subscribed through another would get no pushes.",
                hint="Set KANDEV_VAPID_PRIVATE_KEY, the same for every web process "
                "(docs/operating.md#web-push says how to make one).",
                id="kandev.E004",
            )
        )
    problem = subject_problem(settings.KANDEV_VAPID_SUBJECT)
    if problem:
        errors.append(
            checks.Error(
                f"KANDEV_VAPID_SUBJECT: {problem}; Apple's push service refuses such pushes.",
                hint="Set KANDEV_PUBLIC_URL to kandev's https:// address, or KANDEV_VAPID_SUBJECT to "
                "mailto: an address you read.",
                id="kandev.E005",
            )
        )
    return errors
