"""Notifications reach each member once per occurrence, as their settings say."""

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from kandev_web.live import user_group
from kandev_web.notifications import services
from kandev_web.notifications.models import Delivery, Event


@pytest.fixture
def session(make_task, make_session):
    return make_session(make_task("Ship <it>"))


def test_defaults_question_on_turn_finished_off(operator):
    assert services.enabled_for(operator, Event.CLARIFICATION_REQUESTED) is True
    assert services.enabled_for(operator, Event.TURN_FINISHED) is False


def test_turn_finished_is_sent_once_to_operators_who_opted_in(
    session, operator, make_operator, workspace, django_capture_on_commit_callbacks
):
    quiet = make_operator("quiet", workspace=workspace)
    services.set_enabled(operator, Event.TURN_FINISHED, True)
    turn = session.turns.get()
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(user_group(operator.pk), channel)
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_finished(session, turn)
        services.turn_finished(session, turn)
    assert list(Delivery.objects.values_list("user__username", flat=True)) == ["alice"]
    message = async_to_sync(layer.receive)(channel)
    # Msgids: each page's socket says them in its viewer's language (tests/notifications/test_languages.py).
    assert message["title"] == "Agent finished its turn"
    assert message["body"] % message["params"] == 'The agent finished its turn on "Ship <it>".'
    assert quiet.pk not in Delivery.objects.values_list("user", flat=True)


def test_settings_page_switches_an_event(operator, operator_client):
    assert operator_client.get("/settings/notifications/").status_code == 200
    response = operator_client.post(f"/settings/notifications/{Event.CLARIFICATION_REQUESTED}/", {"enabled": "false"})
    assert 'data-enabled="false"' in response.text
    assert services.enabled_for(operator, Event.CLARIFICATION_REQUESTED) is False
    assert operator_client.post("/settings/notifications/nope/", {"enabled": "true"}).status_code == 404
