"""features.acpUrlElicitation is registered like features.acpElicitation: same precedence, toggle and env lock."""

import json

from django.test import Client

from kandev_web.flags import services
from kandev_web.flags.registry import ACP_URL_ELICITATION, FLAGS, Kind, RiskLevel, Stability
from kandev_web.flags.resolution import Source, profile_values, resolve

FLAG = FLAGS[ACP_URL_ELICITATION]
URL = "/api/v1/runtime-flags"


def test_registered_beside_form_elicitation_and_off_everywhere():
    assert (FLAG.key, FLAG.env_var) == ("features.acpUrlElicitation", "KANDEV_FEATURES_ACP_URL_ELICITATION")
    assert (FLAG.kind, FLAG.stability, FLAG.risk_level) == (Kind.FEATURE, Stability.EXPERIMENTAL, RiskLevel.MEDIUM)
    assert (FLAG.restart_required, FLAG.mutable, FLAG.default) == (True, True, False)
    assert profile_values()[ACP_URL_ELICITATION] == {"prod": "false", "dev": "false", "e2e": "false"}
    for profile in ("prod", "dev", "e2e"):
        assert resolve(FLAG, environ={}, override=None, profile=profile).effective_value is False


def test_the_same_precedence():
    assert resolve(FLAG, environ={FLAG.env_var: "on"}, override=False, profile="prod").source == Source.ENV
    assert resolve(FLAG, environ={}, override=True, profile="prod").source == Source.OVERRIDE


def test_the_admin_toggle_turns_it_on_for_executions_started_afterwards(superuser_client: Client):
    body = superuser_client.patch(
        f"{URL}/{ACP_URL_ELICITATION}", data=json.dumps({"override": True}), content_type="application/json"
    ).json()
    assert (body["effective_value"], body["source"]) == (True, "override")
    assert services.runtime_flags()[ACP_URL_ELICITATION] is True
    page = superuser_client.get("/settings/feature-toggles/").text
    assert 'data-testid="feature-toggle-features.acpUrlElicitation"' in page


def test_the_env_locks_it(superuser_client: Client, monkeypatch):
    monkeypatch.setenv("KANDEV_FEATURES_ACP_URL_ELICITATION", "true")
    response = superuser_client.patch(
        f"{URL}/{ACP_URL_ELICITATION}", data=json.dumps({"override": False}), content_type="application/json"
    )
    assert response.status_code == 409
