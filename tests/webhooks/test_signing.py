"""What a receiver relies on: the signature holds for the body sent and for nothing else, and the payload never
carries a question."""

import json
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.webhooks import payloads, signing
from kandev_web.webhooks.retries import retry_delay

SECRET = "whsec_test"
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


def test_a_signature_is_stripes_scheme_over_timestamp_dot_body():
    import hashlib
    import hmac

    body = b'{"event":"turn.finished"}'
    expected = hmac.new(SECRET.encode(), b"1800000000." + body, hashlib.sha256).hexdigest()
    assert signing.sign(SECRET, body, NOW) == f"t=1800000000,v1={expected}"


@given(st.binary(max_size=2000), st.text(min_size=1, max_size=60))
def test_verify_accepts_what_sign_made(body, secret):
    assert signing.verify(secret, body, signing.sign(secret, body, NOW), now=NOW + 10)


@given(st.binary(max_size=500), st.binary(min_size=1, max_size=8))
def test_a_tampered_body_fails(body, extra):
    header = signing.sign(SECRET, body, NOW)
    assert not signing.verify(SECRET, body + extra, header, now=NOW)


def test_another_secret_an_old_signature_or_a_garbled_header_fails():
    body = b"{}"
    header = signing.sign(SECRET, body, NOW)
    assert not signing.verify("whsec_other", body, header, now=NOW)
    assert not signing.verify(SECRET, body, header, now=NOW + signing.TOLERANCE_SECONDS + 1)
    moved = header.replace(f"t={NOW}", f"t={NOW + 60}")
    assert not signing.verify(SECRET, body, moved, now=NOW + 60)
    for garbled in ("", "v1=abc", "t=soon,v1=abc", "t=1800000000"):
        assert not signing.verify(SECRET, body, garbled, now=NOW)


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
