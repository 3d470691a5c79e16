"""What the web app tells agentctl when it starts an agent: the flags, and whether http sign-in pages may be shown."""

from django.test import override_settings

from kandev_web.flags.services import runtime_flags
from kandev_web.sessions.runner import initialize_payload


def test_every_registered_flag_travels_including_url_mode(db):
    payload = initialize_payload("claude-acp", runtime_flags())
    assert payload["runtime_flags"] == {
        "features.acpElicitation": False,
        "features.acpUrlElicitation": False,
        "features.acpBooleanConfigOptions": False,
    }


@override_settings(DEBUG=False)
def test_a_deployment_shows_only_https_addresses():
    assert initialize_payload("claude-acp", {}) == {"agent_id": "claude-acp", "runtime_flags": {}}


@override_settings(DEBUG=True)
def test_development_may_show_http_to_this_machine():
    assert initialize_payload("claude-acp", {})["url_http_loopback"] is True
