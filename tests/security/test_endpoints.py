"""Every HTTP endpoint, enumerated from the URLconf: CSRF, login, and workspace isolation.

The endpoints are read from ``kandev_web.urls`` at run time
(``testing_support.endpoints``), so a new one is covered the day it is added.
A new URL parameter must be given a value in ``_values`` (and, if it names an
object in a workspace, in ``_foreign_values``): the tests fail until someone
has decided what it means.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Task
from kandev_web.clarifications.models import Clarification
from kandev_web.flags.registry import FLAGS
from kandev_web.notifications.models import Event
from kandev_web.repositories.models import Repository
from kandev_web.sessions.models import Message, TaskSession
from kandev_web.webhooks.models import Webhook
from testing_support.endpoints import ENDPOINTS, Endpoint, workspace_objects

#: Reachable without a login, on purpose: the login page, the probes a load balancer sends, and the web app
#: manifest (a browser reads it for the login page too, to offer installing kandev).
PUBLIC = {"login", "healthz", "readyz", "web-manifest"}
#: For a scraper's token or a superuser: anyone else is refused outright, not sent to a login page it cannot use.
SCRAPED = {"metrics"}
#: Parameters that do not name an object of a workspace (a flag key, a notification event).
GLOBAL_PARAMETERS = {"key", "event"}
UNSAFE_METHODS = ("post", "put", "patch", "delete")

OBJECT_ENDPOINTS = [e for e in ENDPOINTS if set(e.parameters) - GLOBAL_PARAMETERS]


def test_the_urlconf_is_enumerated():
    names = {e.name for e in ENDPOINTS}
    # A sample from every app, so an import change cannot silently empty the list.
    assert {
        "login",
        "logout",
        "board:home",
        "board:task-delete",
        "sessions:start",
        "clarifications:respond",
        "flags:api-flag",
        "notifications:set",
        "webhooks:delete",
    } <= names


@dataclass
class World:
    """One workspace the operator belongs to, and another one they do not."""

    mine: dict[str, object]
    theirs: dict[str, object]
    their_task: Task
    their_clarification: Clarification
    their_permission: Message


@pytest.fixture
def world(db) -> tuple[World, object]:
    mine, theirs = workspace_objects("mine"), workspace_objects("theirs")
    # No password (tests log in with force_login): hashing one costs a second per test.
    operator = get_user_model().objects.create_user("alice", is_staff=True, is_superuser=True)
    mine["workspace"].members.add(operator)
    theirs["workspace"].members.add(get_user_model().objects.create_user("bob"))
    return World(mine, theirs, theirs["task"], theirs["clarification"], theirs["permission"]), operator


def _values(world: World, endpoint: Endpoint, *, objects: dict[str, object]) -> dict[str, object]:
    values = {"key": next(iter(FLAGS)), "event": Event.CLARIFICATION_REQUESTED.value, **objects}
    missing = set(endpoint.parameters) - set(values)
    assert not missing, f"{endpoint}: give the URL parameter(s) {sorted(missing)} a value in this test"
    return {name: values[name] for name in endpoint.parameters}


def _url(world: World, endpoint: Endpoint, *, objects: dict[str, object] | None = None) -> str:
    return reverse(endpoint.name, kwargs=_values(world, endpoint, objects=objects or world.mine["values"]))


# CSRF ------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_unsafe_methods_without_a_csrf_token_are_403(world, endpoint):
    world, operator = world
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    url = _url(world, endpoint)
    for method in UNSAFE_METHODS:
        response = getattr(client, method)(url, {"prompt": "x", "option_id": "ok", "action": "skip", "enabled": "true"})
        assert response.status_code == 403, f"{method.upper()} {url}: {response.status_code}"
        assert b"CSRF verification failed" in response.content, f"{method.upper()} {url} was refused, but not by CSRF"
    # A wrong token is no better than none.
    client.cookies["csrftoken"] = "a" * 32
    response = client.post(url, HTTP_X_CSRFTOKEN="b" * 32)
    assert response.status_code == 403, url
    # Nothing was done.
    assert Task.objects.filter(pk=world.mine["task"].pk).exists()
    world.mine["clarification"].refresh_from_db()
    assert world.mine["clarification"].status == "pending"


# Methods ---------------------------------------------------------------------

#: What a page shown by GET also takes: a form posting back to it (a GET shows it, a POST submits
#: it), or a resource of the JSON API that changes by PATCH.
WRITES_TAKEN = {
    "login": {"post"},
    "board:task-edit": {"post"},
    "sessions:profile-new": {"post"},
    "sessions:profile-edit": {"post"},
    "sessions:repositories": {"post"},
    "flags:api-flag": {"patch"},
}
#: Django's own: its language switch redirects a GET back, as a link to it may.
FOREIGN = {"set_language"}


def test_a_page_refuses_a_write_with_405_instead_of_showing_itself(world):
    """A page shown by GET changes nothing, so a write to it it does not take is 405, not the page again.

    One test over every endpoint a GET shows: most endpoints are not pages,
    and a test per endpoint would pass for those without checking anything.
    """
    world, operator = world
    client = Client()
    client.force_login(operator)
    pages, wrong = set(), []
    for endpoint in ENDPOINTS:
        url = _url(world, endpoint)
        if endpoint.name in FOREIGN or client.get(url).status_code != 200:
            continue
        pages.add(endpoint.name)
        for method in sorted(set(UNSAFE_METHODS) - WRITES_TAKEN.get(endpoint.name, set())):
            response = getattr(client, method)(url)
            if response.status_code != 405 or "GET" not in response.get("Allow", ""):
                wrong.append(f"{method.upper()} {url}: {response.status_code}")
    # A page of every app that has one, so that a change in how pages are found cannot empty the check.
    assert {
        "board:board",
        "sessions:task",
        "inbox:inbox",
        "usage:usage",
        "sessions:profiles",
        "notifications:settings",
        "flags:feature-toggles",
        "review:review",
        "webhooks:list",
    } <= pages
    assert wrong == []


# Login -----------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_an_anonymous_visitor_is_sent_to_the_login_page(world, endpoint):
    world, _ = world
    anonymous = Client()
    url = _url(world, endpoint)
    for method in ("get", *UNSAFE_METHODS):
        response = getattr(anonymous, method)(url, {"prompt": "x", "action": "skip", "enabled": "true"})
        if endpoint.name in PUBLIC:
            assert response.status_code in {200, 302, 405}, f"{method.upper()} {url}: {response.status_code}"
            assert "/login/" not in response.get("Location", "")
            continue
        if endpoint.name in SCRAPED:
            assert response.status_code in {403, 405}, f"{method.upper()} {url}: {response.status_code}"
            continue
        assert response.status_code == 302, f"{method.upper()} {url}: {response.status_code}"
        assert response["Location"].startswith("/login/?next="), f"{method.upper()} {url} -> {response['Location']}"
    assert Task.objects.filter(pk=world.mine["task"].pk).exists()
    world.mine["clarification"].refresh_from_db()
    assert world.mine["clarification"].status == "pending"


def test_the_login_page_itself_is_public():
    response = Client().get(reverse("login"))
    assert response.status_code == 200
    assert b'data-testid="login-form"' in response.content


# Workspaces ------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", OBJECT_ENDPOINTS, ids=str)
def test_another_workspaces_objects_look_like_missing_ones(world, endpoint):
    """For every endpoint naming an object: another workspace's object answers
    exactly as an object that does not exist (404, or 405 before any lookup),
    and nothing about it changes."""
    world, operator = world
    client = Client()
    client.force_login(operator)
    foreign = _url(world, endpoint, objects=world.theirs["values"])
    nowhere = {
        "board_id": 999_999,
        "step_id": 999_999,
        "task_id": 999_999,
        "session_id": 999_999,
        "pending_id": "nope",
        "workspace_id": 999_999,
        "profile_id": 999_999,
        "repository_id": 999_999,
        "webhook_id": 999_999,
        "comment_id": 999_999,
    }
    missing = _url(world, endpoint, objects=nowhere)
    data = {"prompt": "x", "option_id": "ok", "action": "skip", "title": "Hijacked", "enabled": "true"}
    for method in ("get", "post"):
        theirs = getattr(client, method)(foreign, data)
        nothing = getattr(client, method)(missing, data)
        assert theirs.status_code in {404, 405}, f"{method.upper()} {foreign}: {theirs.status_code}"
        assert theirs.status_code == nothing.status_code, f"{method.upper()} {foreign} differs from a missing object"
        assert b"theirs" not in theirs.content
    task = world.their_task
    task.refresh_from_db()
    assert task.title == "theirs task"
    world.their_clarification.refresh_from_db()
    assert world.their_clarification.status == "pending"
    world.their_permission.refresh_from_db()
    assert world.their_permission.metadata["status"] == "pending"
    assert TaskSession.objects.filter(task=task).count() == 1
    their_profile = AgentProfile.objects.get(pk=world.theirs["values"]["profile_id"])
    assert (their_profile.name, their_profile.checked_at) == ("theirs agent", None)
    assert Repository.objects.filter(pk=world.theirs["values"]["repository_id"]).exists()
    their_webhook = Webhook.objects.get(pk=world.theirs["values"]["webhook_id"])
    assert their_webhook.active
    assert not their_webhook.deliveries.exists()


def test_every_object_parameter_is_covered():
    """A new object-naming URL parameter needs a foreign value above before it ships."""
    known = {"board_id", "step_id", "task_id", "session_id", "pending_id"}
    known |= {"workspace_id", "profile_id", "repository_id", "webhook_id", "comment_id"}
    known |= GLOBAL_PARAMETERS
    unknown = {p for e in ENDPOINTS for p in e.parameters} - known
    assert not unknown, f"decide what these URL parameters name and test them: {sorted(unknown)}"
