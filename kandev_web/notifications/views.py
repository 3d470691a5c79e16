"""An operator's notification settings, and the browsers they turned Web Push on in."""

import json
from functools import cache
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from . import services, vapid, webpush
from .models import Event


@require_GET
def notification_settings(request):
    return render(
        request,
        "notifications/settings.html",
        {"settings": services.settings_for(request.user), "vapid_key": vapid.public_key()},
    )


@require_POST
def notification_setting_set(request, event):
    if event not in Event.values:
        return HttpResponse(status=404)
    services.set_enabled(request.user, event, request.POST.get("enabled") == "true")
    setting = next(s for s in services.settings_for(request.user) if s["event"] == event)
    return render(request, "notifications/settings.html#setting", {"setting": setting})


def _json_body(request) -> object:
    if len(request.body) > webpush.ENDPOINT_CHARS * 2:
        return None
    try:
        return json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        return None


@require_POST
def push_subscribe(request):
    """This browser's ``PushSubscription.toJSON()``: it now gets the logged-in operator's pushes.

    409 if its endpoint is someone else's: it is not taken over.
    """
    subscription = webpush.parse_subscription(_json_body(request), allow_http=not settings.IS_PROD)
    if subscription is None:
        return JsonResponse({"error": "not a push subscription"}, status=400)
    try:
        services.subscribe(request.user, subscription)
    except services.EndpointTaken:
        # The page's script unsubscribes this browser and subscribes again, for an endpoint of its own.
        return JsonResponse({"error": "this push subscription is registered already"}, status=409)
    return JsonResponse({"subscribed": True}, status=201)


@require_POST
def push_unsubscribe(request):
    """Forget this browser's subscription (``{"endpoint": …}``), if it is the logged-in operator's."""
    data = _json_body(request)
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    if not isinstance(endpoint, str):
        return JsonResponse({"error": "no endpoint"}, status=400)
    services.unsubscribe(request.user, endpoint)
    return HttpResponse(status=204)


@cache
def _worker_script() -> bytes:
    script = finders.find("js/sw.js")
    assert script is not None, "static/js/sw.js ships with the app"
    return Path(script).read_bytes()


@require_GET
@never_cache
def service_worker(request):
    """The service worker, from the site's root so that its scope covers every page (a static URL's would not)."""
    response = HttpResponse(_worker_script(), content_type="text/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    return response
