"""Whether this web process is up, whether it can serve, and what it counts: for load balancers and Prometheus.

``/healthz`` says the process answers (no login, no database): a liveness
probe restarts a process that does not. ``/readyz`` says it can serve now:
its database answers and its channel layer carries a message (with Redis,
that Redis is reachable); a readiness probe takes it out of rotation while
either is down. ``/metrics`` is Prometheus' text format: the counters in
``kandev_web.metrics`` plus what the database holds right now. It is public
only to a scraper with ``KANDEV_METRICS_TOKEN`` (a bearer token), or to a superuser
when no token is set: counts of questions and agents are nobody else's business.
"""

import asyncio
import hmac
import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.db.models import Count
from django.http import HttpResponse, HttpResponseForbidden, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import GaugeMetricFamily

from kandev_web import live
from kandev_web.clarifications.models import Clarification, Status
from kandev_web.metrics import REGISTRY
from kandev_web.sessions.models import AgentExecution

logger = logging.getLogger(__name__)

#: How long a dependency may take to answer before it counts as down.
CHECK_TIMEOUT_SECONDS = 2.0


@login_not_required
@never_cache
@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


def _database_answers() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


async def _channel_layer_carries() -> None:
    layer = live.channel_layer()
    # Every layer Kandev configures (Redis, in memory) names a channel after a
    # prefix; the base class the stubs know takes none.
    channel = await layer.new_channel("readyz.")  # type: ignore[call-arg]
    await layer.send(channel, {"type": "readyz.ping"})
    await layer.receive(channel)


async def _check(name: str, check) -> str:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            await check()
    except Exception as error:  # any failure means not ready; which one is for the log
        logger.warning("readiness: %s is down (%s)", name, type(error).__name__)
        return "down"
    return "ok"


@login_not_required
@never_cache
@require_GET
async def readyz(request):
    checks = {
        "database": await _check("database", sync_to_async(_database_answers, thread_sensitive=False)),
        "channel_layer": await _check("channel layer", _channel_layer_carries),
    }
    ready = all(state == "ok" for state in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)


class DatabaseCounts:
    """Gauges read from the database at each scrape: the same for every web process."""

    def describe(self):
        # Without it the registry would call collect(), and so the database, when this is registered at import.
        return list(self._families())

    def collect(self):
        executions, pending = self._families()
        executions.add_metric([], AgentExecution.objects.filter(ended_at__isnull=True).count())
        for source, count in _pending_by_source():
            pending.add_metric([source], count)
        yield executions
        yield pending

    def _families(self):
        return (
            GaugeMetricFamily("kandev_live_executions", "Agent executions that have not ended."),
            GaugeMetricFamily(
                "kandev_pending_questions", "Questions waiting for an operator's answer, by source.", labels=["source"]
            ),
        )


def _pending_by_source():
    pending = Clarification.objects.filter(status=Status.PENDING).order_by()
    return pending.values_list("source").annotate(count=Count("pk")).values_list("source", "count")


REGISTRY.register(DatabaseCounts())


def _may_scrape(request) -> bool:
    token = settings.KANDEV_METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ")
        return hmac.compare_digest(given.encode(), token.encode())
    return request.user.is_authenticated and request.user.is_superuser


@login_not_required
@never_cache
@require_GET
def metrics(request):
    if not _may_scrape(request):
        return HttpResponseForbidden()
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
