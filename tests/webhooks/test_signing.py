"""What a receiver relies on: the Standard Webhooks library verifies the signature for the body, id and time sent and
for nothing else, and the payload never carries a question."""

import base64
import hashlib
import hmac
import json
import string
import time
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import WebhookVerificationError

from kandev_web.webhooks import payloads, signing
from kandev_web.webhooks.retries import retry_delay

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
NOW = 1_800_000_000


def subject(title: str) -> payloads.Subject:
    return payloads.Subject(
        workspace_id=1,
        workspace_name="Platform",
        board_id=2,
        board_name="Main",
        task_id=3,
        task_title=title,
        task_url="https://kandev.example/tasks/3/",
        session_id=4,
    )


def _now() -> int:
    return int(time.time())


def test_a_signature_is_the_standard_webhooks_scheme_over_id_dot_timestamp_dot_body():
    body = b'{"event":"turn.finished"}'
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    headers = signing.headers(SECRET, "d-1", body, NOW)
    expected = base64.b64encode(hmac.new(key, b"d-1.1800000000." + body, hashlib.sha256).digest()).decode()
    assert headers == {"webhook-id": "d-1", "webhook-timestamp": "1800000000", "webhook-signature": f"v1,{expected}"}


def test_a_new_secret_is_whsec_and_base64_of_32_bytes():
    secret = signing.new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
    assert signing.standard_secret(secret) == secret


@given(st.binary(max_size=2000), st.uuids())
def test_the_standard_webhooks_library_verifies_what_kandev_signs(body, message_id):
    secret = signing.new_secret()
    headers = signing.headers(secret, str(message_id), body, _now())
    assert StandardWebhook(secret).verify(body, headers, json_parse=False) is None  # raises if it does not hold


@given(st.binary(max_size=500), st.binary(min_size=1, max_size=8))
def test_a_tampered_body_fails(body, extra):
    headers = signing.headers(SECRET, "d-1", body, _now())
    with pytest.raises(WebhookVerificationError):
        StandardWebhook(SECRET).verify(body + extra, headers, json_parse=False)


def test_a_request_replayed_under_a_new_id_another_secret_or_an_old_one_fails():
    body = b"{}"
    headers = signing.headers(SECRET, "d-1", body, _now())
    StandardWebhook(SECRET).verify(body, headers)
    replayed = headers | {"webhook-id": "d-2"}  # a receiver that drops repeated ids would take this one
    other = signing.new_secret()
    stale = signing.headers(SECRET, "d-1", body, _now() - 600)
    for secret, sent in ((SECRET, replayed), (other, headers), (SECRET, stale)):
        with pytest.raises(WebhookVerificationError):
            StandardWebhook(secret).verify(body, sent)


@given(st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=43, max_size=43))
def test_a_secret_from_before_standard_webhooks_keeps_its_key_in_the_standard_form(token):
    legacy = "whsec_" + token  # secrets.token_urlsafe(32), as webhooks were given before
    standard = signing.standard_secret(legacy)
    assert base64.b64decode(standard.removeprefix("whsec_"), validate=True) == legacy.encode()
    body = b'{"event":"webhook.test"}'
    StandardWebhook(standard).verify(body, signing.headers(legacy, "d-1", body, _now()))


@given(st.text(max_size=300))
def test_any_title_makes_valid_json_with_ids_and_no_question(title):
    at = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    payload = payloads.build(
        "question.asked",
        delivery="d-1",
        occurred_at=at,
        subject=subject(title),
        workspace=(1, "Platform"),
        question=("p-1", "elicitation", "pending"),
    )
    decoded = json.loads(payloads.encode(payload))
    assert decoded == {
        "event": "question.asked",
        "delivery": "d-1",
        "occurred_at": "2026-12-01T12:00:00+00:00",
        "workspace": {"id": 1, "name": "Platform"},
        "board": {"id": 2, "name": "Main"},
        "task": {"id": 3, "title": title, "url": "https://kandev.example/tasks/3/"},
        "session": {"id": 4},
        "question": {"id": "p-1", "source": "elicitation", "status": "pending"},
    }


def test_the_same_payload_encodes_to_the_same_bytes():
    at = datetime(2026, 12, 1, tzinfo=UTC)

    def make():
        return payloads.build("turn.finished", delivery="d", occurred_at=at, subject=subject("x"), workspace=(1, "P"))

    assert payloads.encode(make()) == payloads.encode(make())
    assert "question" not in make()


def test_retries_back_off_then_give_up():
    backoff = (10.0, 60.0, 300.0)
    assert [retry_delay(n, backoff) for n in range(1, 5)] == [10.0, 60.0, 300.0, None]
    assert retry_delay(0, backoff) is None
