"""The feature-toggles page and the runtime-flags JSON API: superusers only, the flags are the whole deployment's."""

import json

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kandev_web.staff import superuser_required

from . import services
from .resolution import FlagState

_CHOICES = {"true": True, "false": False, "default": None}


@superuser_required
@require_GET
def feature_toggles(request):
    return render(request, "flags/feature_toggles.html", {"states": services.flag_states()})


@superuser_required
@require_POST
def feature_toggle_set(request, key):
    try:
        value = _CHOICES[request.POST.get("value", "")]
        state = services.set_override(key, value, user=request.user)
    except KeyError:
        return HttpResponse(status=400)
    except services.FlagNotFound:
        return HttpResponse(status=404)
    except services.FlagLocked:
        state, status = services.flag_state(key), 409
    else:
        status = 200
    return render(request, "flags/feature_toggles.html#card", {"state": state}, status=status)


def as_json(state: FlagState) -> dict:
    flag = state.definition
    return {
        "key": flag.key,
        "env_var": flag.env_var,
        "kind": flag.kind.value,
        "label": str(flag.label),
        "description": str(flag.description),
        "stability": flag.stability.value,
        "risk_level": flag.risk_level.value,
        "risk_description": str(flag.risk_description),
        "restart_required": flag.restart_required,
        "mutable": flag.mutable,
        "effective_value": state.effective_value,
        "default_value": state.default_value,
        "override_value": state.override_value,
        "source": state.source.value,
        "env_locked": state.env_locked,
        "requires_restart_to_apply": state.requires_restart_to_apply,
    }


def _error(message, status):
    return JsonResponse({"error": message}, status=status)


class BadBody(ValueError):
    """A request body that is not a JSON document; ``str()`` says why, for the API client."""


def read_json(body: bytes) -> object:
    """The JSON document in ``body`` (empty: ``{}``); raise ``BadBody``.

    ``json.loads`` raises more than ``JSONDecodeError`` on hostile input: a
    ``UnicodeDecodeError`` for bytes that are not UTF-8, a ``ValueError`` for
    an integer past Python's 4300-digit limit, a ``RecursionError`` for
    nesting deeper than the interpreter's stack. Each is the client's mistake.
    """
    try:
        return json.loads(body or b"{}")
    except UnicodeDecodeError:
        raise BadBody("request body is not UTF-8") from None
    except RecursionError:
        raise BadBody("request body is nested too deeply") from None
    except ValueError:
        raise BadBody("request body is not JSON") from None


@superuser_required
@require_http_methods(["GET"])
def api_flags(request):
    return JsonResponse({"flags": [as_json(state) for state in services.flag_states()]})


@superuser_required
@require_http_methods(["GET", "PATCH"])
def api_flag(request, key):
    try:
        if request.method == "GET":
            return JsonResponse(as_json(services.flag_state(key)))
        try:
            body = read_json(request.body)
        except BadBody as bad:
            return _error(str(bad), 400)
        if not isinstance(body, dict) or not isinstance(body.get("override", ""), bool | None):
            return _error('expected {"override": true | false | null}', 400)
        return JsonResponse(as_json(services.set_override(key, body["override"], user=request.user)))
    except services.FlagNotFound:
        return _error("runtime flag not found", 404)
    except services.FlagLocked:
        return _error("runtime flag is controlled by environment", 409)
