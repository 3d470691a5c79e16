"""What this web process counts for Prometheus: one registry, and the few metrics the code itself updates.

Counts that the database already holds (live executions, pending questions)
are read when ``/metrics`` is scraped (``kandev_web.health``), never kept
here, so that every web process reports the same truth. Labels are bounded
sets (a method, a status class, a page kind, an outcome): nothing an operator
or an agent wrote ever becomes a label.
"""

import time

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
)

REGISTRY = CollectorRegistry(auto_describe=True)
# The process's memory, CPU and open files, the Python version, and the garbage collector's work:
# what prometheus_client's default registry has, in ours.
for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)

REQUESTS = Counter(
    "kandev_http_requests",
    "HTTP requests this process answered, by method and status class.",
    ["method", "status"],
    registry=REGISTRY,
)
OPEN_SOCKETS = Gauge(
    "kandev_open_sockets",
    "Live page WebSockets open on this process, by page.",
    ["page"],
    registry=REGISTRY,
)
ANSWER_SECONDS = Histogram(
    "kandev_answer_seconds",
    "From an operator's answer reaching this process to what became of it (agentctl's reply, or the refusal).",
    ["outcome"],
    buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=REGISTRY,
)
PUSH_DELIVERIES = Counter(
    "kandev_push_deliveries",
    "Pushes offered to a browser's push service, by outcome (delivered, gone, http_error, redirect, refused, "
    "timeout, failed).",
    ["outcome"],
    registry=REGISTRY,
)
WEBHOOK_DELIVERIES = Counter(
    "kandev_webhook_deliveries",
    "Webhook POST attempts, by outcome (delivered, http_error, redirect, refused, timeout, failed, unsigned).",
    ["outcome"],
    registry=REGISTRY,
)

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def count_request(method: str, status: int) -> None:
    REQUESTS.labels(method if method in _METHODS else "other", f"{status // 100}xx").inc()


class RequestMetricsMiddleware:
    """Counts every response by method and status class, for sync and async requests alike."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        response = self.get_response(request)
        count_request(request.method, response.status_code)
        return response

    async def _acall(self, request):
        response = await self.get_response(request)
        count_request(request.method, response.status_code)
        return response


class Timer:
    """``with Timer() as timer: ...`` then ``timer.seconds``: how long the block took, by the monotonic clock."""

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._start
