"""Login throttling (django-axes) on both login pages: wrong passwords lock a username out for a while.

Each page is driven as a browser would, by posting its form; ``force_login``
would bypass exactly what is tested here.
"""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from kandev_web.login import lockout_message

PASSWORD = "right-password-1"
PAGES = {"login": "/login/", "admin": "/admin/login/"}


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", password=PASSWORD, is_staff=True)


def _log_in(client: Client, page: str, password: str, username: str = "alice"):
    return client.post(PAGES[page], {"username": username, "password": password, "next": "/"})


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.parametrize("login_url", PAGES)
def test_the_right_password_is_refused_after_too_many_wrong_ones(alice, login_url):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _log_in(client, login_url, "wrong").status_code == 200
    # The failure that reaches the limit is told so at once.
    assert _log_in(client, login_url, "wrong").status_code == 429
    response = _log_in(client, login_url, PASSWORD)
    assert response.status_code == 429
    assert not _logged_in(client)
    text = response.content.decode()
    assert 'data-testid="login-locked-out"' in text
    assert "locked for 15 minutes" in text
    assert "ask an administrator to reset it" in text
    assert 'data-testid="login-form"' in text, "the login page itself, to try again later"


def test_the_lockout_is_shared_by_both_pages(alice):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _log_in(client, "login", "wrong")
    assert _log_in(client, "admin", PASSWORD).status_code == 429
    assert not _logged_in(client)


@pytest.mark.parametrize("command", [("axes_reset_username", "alice"), ("axes_reset",)], ids=lambda c: c[0])
def test_a_reset_lets_the_operator_in_again(alice, command):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _log_in(client, "login", "wrong")
    assert _log_in(client, "login", PASSWORD).status_code == 429
    call_command(*command, verbosity=0)
    response = _log_in(client, "login", PASSWORD)
    assert response.status_code == 302
    assert _logged_in(client)


def test_a_success_forgets_earlier_failures(alice):
    """Only failures count, and a success starts again from none: people who log in often never get near the limit."""
    client = Client()
    for _ in range(3):
        for _ in range(settings.AXES_FAILURE_LIMIT - 1):
            _log_in(client, "login", "wrong")
        assert _log_in(client, "login", PASSWORD).status_code == 302
        client.logout()
    assert _log_in(client, "login", PASSWORD).status_code == 302


def test_a_locked_out_username_does_not_lock_out_another(alice):
    get_user_model().objects.create_user("bob", password=PASSWORD)
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _log_in(client, "login", "wrong")
    assert _log_in(client, "login", PASSWORD, username="bob").status_code == 302


@pytest.mark.parametrize(
    ("cooloff", "expected"),
    [
        (timedelta(minutes=15), "locked for 15 minutes"),
        (timedelta(minutes=1), "locked for 1 minute."),
        (timedelta(seconds=10), "locked for 1 minute."),
        (None, "An administrator must reset it."),
    ],
)
def test_the_lockout_sentence_says_how_long(cooloff, expected):
    assert expected in lockout_message(cooloff)
