"""An operator's notification settings."""

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from . import services
from .models import Event


def notification_settings(request):
    return render(request, "notifications/settings.html", {"settings": services.settings_for(request.user)})


@require_POST
def notification_setting_set(request, event):
    if event not in Event.values:
        return HttpResponse(status=404)
    services.set_enabled(request.user, event, request.POST.get("enabled") == "true")
    setting = next(s for s in services.settings_for(request.user) if s["event"] == event)
    return render(request, "notifications/settings.html#setting", {"setting": setting})
