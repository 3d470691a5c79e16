import contextlib
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_web.flags import services
from kandev_web.flags.models import FlagOverride

URL = "/api/v1/runtime-flags"
KEY = "features.acpElicitation"


def patch(client, key, body):
    return client.patch(f"{URL}/{key}", data=json.dumps(body), content_type="application/json")


def test_lists_flags_with_definition_and_state(superuser_client):
    flags = superuser_client.get(URL).json()["flags"]
    [flag] = [f for f in flags if f["key"] == KEY]
    assert flag["env_var"] == "KANDEV_FEATURES_ACP_ELICITATION"
    assert flag["stability"] == "experimental"
    assert flag["risk_level"] == "medium"
    assert (flag["effective_value"], flag["source"], flag["env_locked"]) == (False, "profile", False)


def test_set_and_clear_an_override(superuser_client):
    body = patch(superuser_client, KEY, {"override": True}).json()
    assert (body["effective_value"], body["source"], body["override_value"]) == (True, "override", True)
    assert services.runtime_flags()[KEY] is True

    body = patch(superuser_client, KEY, {"override": None}).json()
    assert (body["effective_value"], body["source"], body["override_value"]) == (False, "profile", None)
    assert not FlagOverride.objects.exists()


def test_env_locked_flag_refuses_an_override(superuser_client, monkeypatch):
    monkeypatch.setenv("KANDEV_FEATURES_ACP_ELICITATION", "true")
    response = patch(superuser_client, KEY, {"override": False})
    assert response.status_code == 409
    assert response.json() == {"error": "runtime flag is controlled by environment"}
    assert not FlagOverride.objects.exists()


def test_unknown_flag_is_404(superuser_client):
    response = patch(superuser_client, "features.nope", {"override": True})
    assert response.status_code == 404
    assert response.json() == {"error": "runtime flag not found"}


@pytest.mark.parametrize("body", [{"override": 1}, {"override": "yes"}, {}, ["override"]])
def test_malformed_body_is_400(superuser_client, body):
    assert patch(superuser_client, KEY, body).status_code == 400


def test_anyone_but_a_superuser_gets_403(make_operator):
    client = Client()
    client.force_login(make_operator("plain"))
    assert client.get(URL).status_code == 403
    assert patch(client, KEY, {"override": True}).status_code == 403
    assert client.get("/settings/feature-toggles/").status_code == 403


def test_patch_without_csrf_token_is_403(make_operator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_operator("root", superuser=True))
    assert patch(client, KEY, {"override": True}).status_code == 403
    assert not FlagOverride.objects.exists()


def test_settings_page_toggle_and_use_default(superuser_client):
    response = superuser_client.post(f"/settings/feature-toggles/{KEY}/", {"value": "true"})
    assert response.status_code == 200
    assert 'data-source="override"' in response.text
    response = superuser_client.post(f"/settings/feature-toggles/{KEY}/", {"value": "default"})
    assert 'data-source="profile"' in response.text
    assert not FlagOverride.objects.exists()


def test_override_is_visible_in_the_django_admin(db):
    FlagOverride.objects.create(key=KEY, value=True)
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("boss", password="pw-123456"))
    response = admin.get("/admin/flags/flagoverride/")
    assert response.status_code == 200
    assert KEY in response.text


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "request body is nested too deeply"),
        (b'{"override": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "request body is nested too deeply"),
        (b'{"override": ' + b"9" * 5000 + b"}", "request body is not JSON"),
        (b'{"override": "\xff\xfe"}', "request body is not UTF-8"),
        (b"\xc3\x28", "request body is not UTF-8"),
        (b"{", "request body is not JSON"),
    ],
    ids=["deep", "deep-value", "5000-digits", "invalid-utf8", "invalid-utf8-bare", "truncated"],
)
def test_a_hostile_body_is_a_400_that_says_why(superuser_client, raw, error):
    response = superuser_client.patch(f"{URL}/{KEY}", data=raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"error": error}
    assert not FlagOverride.objects.exists()


@settings(max_examples=60)
@given(st.binary(max_size=200))
def test_no_body_is_a_server_error(raw):
    from kandev_web.flags.views import BadBody, read_json

    with contextlib.suppress(BadBody):
        read_json(raw)
