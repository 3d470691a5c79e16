"""Deployments that cannot work with several web processes, refused before they serve.

With ``REDIS_URL`` set, several web processes share the channel layer, and
any of them may serve an agent another one started. That needs a database
every process can write at once (not one SQLite file) and agentctls every
process can reach (not on a loopback address, unless every web process is
on one machine: then say so by silencing ``kandev.E002`` with
``KANDEV_SILENCED_CHECKS``). ``manage.py`` runs these checks as usual, and
``kandev_web.asgi`` runs them before Daphne serves anything.

Prod must also say where agents reach the MCP endpoint (``kandev.E003``):
elsewhere it falls back to this server's own address, but a deployment's
agents may run on other machines, and the request's Host header, the old
fallback, is whatever the operator's client sent. ``notifications/checks.py``
adds Web Push's under the same tag.
"""

import ipaddress

from django.conf import settings
from django.core import checks

TAG = "kandev_deployment"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@checks.register(TAG)
def check_several_processes(app_configs, **kwargs):
    return problems(settings.REDIS_URL, settings.DATABASES["default"]["ENGINE"], settings.KANDEV_AGENTCTL_HOST)


@checks.register(TAG)
def check_mcp_url(app_configs, **kwargs):
    """Prod tells agents a configured MCP URL; the request's Host header is a client's to choose."""
    if settings.IS_PROD and not settings.KANDEV_MCP_URL:
        return [
            checks.Error(
                "Neither KANDEV_MCP_URL nor KANDEV_PUBLIC_URL is set, so agents would not know where to ask "
                "their questions.",
                hint="Set KANDEV_PUBLIC_URL to where operators reach kandev (its /mcp/ is then the MCP URL), "
                "or KANDEV_MCP_URL to where agents reach the MCP endpoint.",
                id="kandev.E003",
            )
        ]
    return []


def problems(redis_url: str, database_engine: str, agentctl_host: str) -> list[checks.CheckMessage]:
    """What stops several web processes from working with these settings."""
    if not redis_url:
        return []
    errors: list[checks.CheckMessage] = []
    if database_engine == "django.db.backends.sqlite3":
        errors.append(
            checks.Error(
                "REDIS_URL is set, so several web processes may run, but the database is one SQLite file.",
                hint="Set DATABASE_URL to a PostgreSQL database every web process uses, or unset REDIS_URL.",
                id="kandev.E001",
            )
        )
    if _is_loopback(agentctl_host):
        errors.append(
            checks.Error(
                f"REDIS_URL is set, but agentctl listens on {agentctl_host}, "
                "which the other web machines cannot reach.",
                hint="Set KANDEV_AGENTCTL_HOST to this machine's address on the private network; if every web "
                "process runs on this one machine, add kandev.E002 to KANDEV_SILENCED_CHECKS.",
                id="kandev.E002",
            )
        )
    return errors


def refuse_unworkable_deployment() -> None:
    """Raise ``ImproperlyConfigured`` with every finding of the checks above that is not silenced."""
    from django.core.exceptions import ImproperlyConfigured

    found = [error for error in checks.run_checks(tags=[TAG]) if error.is_serious() and not error.is_silenced()]
    if found:
        raise ImproperlyConfigured(" ".join(f"{error.id}: {error.msg} {error.hint}" for error in found))
