"""Prod starts only knowing where agents ask and with one Web Push identity for all its processes.

``manage.py check`` runs the same checks a web process runs before it serves
(``kandev_web.asgi``), so each is tried here through it, under a clean prod environment.
"""

import pytest

from kandev_web.notifications.checks import subject_problem
from testing_support.deployment import prod_env, run_clean


def _check(tmp_path, **overrides: str):
    return run_clean(tmp_path, "manage.py", "check", **prod_env(**overrides))


def test_prod_with_a_public_url_and_a_vapid_key_passes(tmp_path):
    result = _check(tmp_path)
    assert result.returncode == 0, result.stderr


def test_prod_without_a_vapid_key_refuses_as_each_process_would_make_its_own(tmp_path):
    result = _check(tmp_path, KANDEV_VAPID_PRIVATE_KEY="")
    assert result.returncode != 0
    assert "kandev.E004" in result.stderr
    assert "KANDEV_VAPID_PRIVATE_KEY is not set" in result.stderr


def test_prod_without_a_public_or_mcp_url_refuses_as_agents_would_not_know_where_to_ask(tmp_path):
    result = _check(tmp_path, KANDEV_PUBLIC_URL="", KANDEV_VAPID_SUBJECT="mailto:ops@kandev.example.com")
    assert result.returncode != 0
    assert "kandev.E003" in result.stderr


@pytest.mark.parametrize(
    ("public_url", "subject"),
    [("https://localhost:8443", "https://localhost:8443"), ("http://kandev.example.com", "mailto:kandev@localhost")],
)
def test_prod_with_a_vapid_subject_at_localhost_refuses_as_apple_would_refuse_its_pushes(tmp_path, public_url, subject):
    result = _check(tmp_path, KANDEV_PUBLIC_URL=public_url)
    assert result.returncode != 0
    assert "kandev.E005" in result.stderr
    assert subject in result.stderr


SETTINGS = "import django; django.setup(); from django.conf import settings as s; print(s.{})"


def test_the_mcp_url_defaults_to_the_public_url_s(tmp_path):
    result = run_clean(tmp_path, "-c", SETTINGS.format("KANDEV_MCP_URL"), **prod_env())
    assert result.stdout.strip() == "https://kandev.example.com/mcp/"


def test_a_public_url_that_is_no_http_url_is_refused_at_once(tmp_path):
    result = run_clean(
        tmp_path, "-c", SETTINGS.format("KANDEV_MCP_URL"), **prod_env(KANDEV_PUBLIC_URL="kandev.example.com")
    )
    assert result.returncode != 0
    assert "KANDEV_PUBLIC_URL must be an http:// or https:// URL" in result.stderr


@pytest.mark.parametrize(
    "subject",
    ["https://kandev.example.com", "https://kandev.example.com/contact", "mailto:ops@example.com"],
)
def test_a_reachable_contact_is_a_vapid_subject(subject):
    assert subject_problem(subject) is None


@pytest.mark.parametrize(
    "subject",
    [
        "mailto:kandev@localhost",
        "mailto:ops@kandev.localhost",
        "mailto:nobody",
        "mailto:ops@127.0.0.1",
        "https://localhost:8443",
        "https://10.0.0.5/",
        "http://kandev.example.com",
        "kandev.example.com",
        "",
    ],
)
def test_an_unreachable_contact_is_not(subject):
    assert subject_problem(subject) is not None
