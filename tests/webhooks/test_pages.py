"""The webhooks page: the workspace's admins only, CSRF on every change, the secret shown once."""

from django.test import Client

from kandev_web.board.models import Workspace
from kandev_web.webhooks.models import DeliveryState, Webhook, WebhookDelivery


def url(workspace, tail=""):
    return f"/settings/workspaces/{workspace.pk}/webhooks/{tail}"


def add(client, workspace, **fields):
    data = {"name": "Team chat", "url": "https://chat.example/hook", "events": ["question.asked", "turn.finished"]}
    return client.post(url(workspace, "new/"), data | fields)


def test_adding_a_webhook_shows_its_secret_once(staff, workspace, make_client):
    client = make_client(staff)
    response = add(client, workspace)
    assert response.status_code == 302
    response = client.get(response.url)
    hook = Webhook.objects.get()
    assert (hook.name, hook.url, hook.events, hook.active) == (
        "Team chat",
        "https://chat.example/hook",
        ["question.asked", "turn.finished"],
        True,
    )
    secret = hook.signing_secret()
    assert secret.startswith("whsec_")
    assert secret in response.text
    assert secret not in hook.secret  # sealed at rest
    page = client.get(url(workspace))
    assert page.status_code == 200
    assert 'data-testid="webhook-card"' in page.text
    assert secret not in page.text


def test_a_bad_url_or_no_event_is_refused_with_the_field_named(staff, workspace, make_client):
    client = make_client(staff)
    response = add(client, workspace, url="file:///etc/passwd", events=[])
    assert response.status_code == 422
    assert 'data-field="url"' in response.text
    assert 'data-field="events"' in response.text
    assert not Webhook.objects.exists()


def test_switching_off_testing_and_removing(staff, workspace, make_client):
    client = make_client(staff)
    add(client, workspace)
    hook = Webhook.objects.get()
    client.post(url(workspace, f"{hook.pk}/test/"), headers={"HX-Request": "true"})
    delivery = WebhookDelivery.objects.get()
    assert (delivery.event, delivery.state) == ("webhook.test", DeliveryState.PENDING)
    log = client.get(url(workspace, f"{hook.pk}/log/"))
    assert f'data-delivery="{delivery.delivery}"' in log.text
    client.post(url(workspace, f"{hook.pk}/active/"), {"active": "false"})
    hook.refresh_from_db()
    assert hook.active is False
    client.post(url(workspace, f"{hook.pk}/delete/"))
    assert not Webhook.objects.exists()
    assert not WebhookDelivery.objects.exists()


def test_only_admins_of_the_workspace_reach_it(staff, operator, workspace, make_operator, make_client):
    add(make_client(staff), workspace)
    hook = Webhook.objects.get()
    assert make_client(operator).get(url(workspace)).status_code == 403
    outsider = make_operator("olga", workspace=Workspace.objects.create(name="Other"), staff=True)
    for path in ("", f"{hook.pk}/log/"):
        assert make_client(outsider).get(url(workspace, path)).status_code == 404
    assert make_client(outsider).post(url(workspace, f"{hook.pk}/delete/")).status_code == 404
    assert Client().get(url(workspace)).status_code == 302  # to the login page
    assert Webhook.objects.exists()


def test_changes_need_the_csrf_token(staff, workspace, make_client):
    client = make_client(staff, enforce_csrf_checks=True)
    assert add(client, workspace).status_code == 403
    assert not Webhook.objects.exists()


def test_rotate_secrets_reseals_webhook_secrets_too(staff, workspace, settings, make_client):
    from cryptography.fernet import Fernet
    from django.core.management import call_command

    add(make_client(staff), workspace)
    hook = Webhook.objects.get()
    secret, sealed = hook.signing_secret(), hook.secret
    settings.KANDEV_SECRETS_KEYS = [Fernet.generate_key(), *settings.KANDEV_SECRETS_KEYS]
    call_command("rotate_secrets")
    hook.refresh_from_db()
    assert hook.secret != sealed
    assert hook.signing_secret() == secret
    settings.KANDEV_SECRETS_KEYS = settings.KANDEV_SECRETS_KEYS[:1]  # the old key dropped
    assert hook.signing_secret() == secret
