"""Every HTTP endpoint answers bad input with a 4xx, never a 5xx: enumerated from the URLconf.

Each endpoint of ``kandev_web.urls`` (and the admin's login page) is called as
a logged-in member of its workspace, with its URL filled with real objects
(a board, a step, a task with a session, an open question, a permission
request), then sent malformed values in every form field there is: the
fields of the project's Django forms and every ``name=`` the pages render,
each alone and all at once, plus huge strings, NUL, bytes that are not UTF-8,
deeply nested JSON, numbers far out of range and missing fields, by GET, by
POST (plain and as htmx) and by the JSON methods. The test client re-raises
any exception a view lets out, so a 500 fails here with its traceback.

A new endpoint or a new field is covered the day it is added.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from kandev_web.agents.models import AgentProfile
from kandev_web.agents.profile_forms import AgentProfileForm
from kandev_web.pages.board.forms import TaskCreateForm, TaskEditForm, TaskMoveForm
from kandev_web.pages.task.forms import PromptForm, StartSessionForm
from testing_support.endpoints import ENDPOINTS, Endpoint, workspace_objects

pytestmark = pytest.mark.slow  # started first: see the root conftest.py

#: Outside the project's URLconf walk (the admin is another app's) but an operator's way in all the same.
EXTRA_ENDPOINTS = [Endpoint("admin:login", ())]

#: Values no field should choke on. Each is sent in every field.
JUNK = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "-1",
    "0",
    "1e3",
    "1.5",
    "abc",
    "9" * 30,
    "9" * 5000,
    "null",
    "true",
    "[" * 5000,
    '{"a":' * 2000 + "1" + "}" * 2000,
    "<script>alert(1)</script>",
    "../../../../etc/passwd",
    "\u202e\ufeff\U0001f600",
    "%00%ff",
    "1,2",
    "-5,-5",
    "9" * 30 + "," + "9" * 30,
]

#: Sent in one field at a time: together they would exceed Django's 2.5 MB body limit (itself a clean 400).
HUGE = "x" * 600_000

#: Bodies that are not what any view reads: not UTF-8, not a form, JSON nested past the interpreter's stack.
RAW_BODIES = [
    (b"title=\xff\xfe&prompt=\xc3\x28&step=\xff", "application/x-www-form-urlencoded"),
    (b"\xff\xfe\x00\x00", "application/x-www-form-urlencoded"),
    (b"[" * 100_000, "application/json"),
    (b'{"override": ' + b"9" * 5000 + b"}", "application/json"),
    (b'{"override": "\xff"}', "application/json"),
    (b'--x\r\nContent-Disposition: form-data; name="title"\r\n\r\n\xff\r\n', "multipart/form-data; boundary=x"),
]

#: Fields read from ``request.POST``/``request.GET`` by hand rather than through a form.
HAND_READ_FIELDS = {
    "option_id",
    "action",
    "reject_reason",
    "value",
    "enabled",
    "after",
    "next",
    "username",
    "password",
    "via",
    "preset",
    "from",
}

FORMS = [TaskCreateForm, TaskEditForm, TaskMoveForm, StartSessionForm, PromptForm, AgentProfileForm]

FIELD_NAME = re.compile(rb'\bname="([^"]+)"')


def _form_fields() -> set[str]:
    return {name for form in FORMS for name in form.base_fields}


@pytest.fixture
def member(db):
    """A superuser in one workspace, with an agent profile there, and its objects' URL values."""
    mine = workspace_objects("mine")
    AgentProfile.objects.create(workspace=mine["workspace"], name="Mock agent", agent_id="mock", command=["true"])
    operator = get_user_model().objects.create_user("alice", is_staff=True, is_superuser=True)
    mine["workspace"].members.add(operator)
    client = Client()
    client.force_login(operator)
    return client, mine["values"]


def _url(endpoint: Endpoint, values: dict[str, object]) -> str:
    given = {"key": "features.acpElicitation", "event": "session.clarification_requested", **values}
    return reverse(endpoint.name, kwargs={name: given[name] for name in endpoint.parameters})


#: What :func:`_page_fields` found, kept for the rest of the module: the names do not depend on which objects.
_found_fields: set[str] = set()


def _page_fields(client: Client, values: dict[str, object]) -> set[str]:
    """Every field name the operator's pages render: forms, the overlay's answers, hx-vals aside."""
    if _found_fields:
        return _found_fields
    pages = [
        reverse("board:board", kwargs={"board_id": values["board_id"]}),
        reverse("sessions:task", kwargs={"task_id": values["task_id"]}),
        reverse("flags:feature-toggles"),
        reverse("notifications:settings"),
        reverse("sessions:profiles", kwargs={"workspace_id": values["workspace_id"]}),
        reverse("login"),
    ]
    names: set[str] = set()
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        names |= {name.decode() for name in FIELD_NAME.findall(response.content)}
    _found_fields.update(names - {"csrfmiddlewaretoken"})
    return _found_fields


def _assert_no_server_error(response, what: str) -> None:
    assert response.status_code < 500, f"{what}: {response.status_code}"


def test_the_fields_are_found(member):
    """The page walk finds the fields that matter, so an empty list cannot pass the test below vacuously."""
    client, values = member
    fields = _page_fields(client, values) | _form_fields()
    assert {
        "title",
        "description",
        "step",
        "prompt",
        "profile",
        "reject_reason",
        "answer-q-option",
        "answer-q-custom",
        "username",
        "password",
        "command",
        "env",
        "agent_id",
        "auth_method",
        "preset",
    } <= fields


@pytest.mark.parametrize("endpoint", ENDPOINTS + EXTRA_ENDPOINTS, ids=str)
def test_no_bad_input_is_a_server_error(member, endpoint):
    client, values = member
    fields = sorted(_page_fields(client, values) | _form_fields() | HAND_READ_FIELDS)
    url = _url(endpoint, values)
    htmx = {"HTTP_HX_REQUEST": "true"}

    _assert_no_server_error(client.get(url), f"GET {url}")
    _assert_no_server_error(client.post(url), f"POST {url} with no fields")
    for junk in JUNK:
        everything = dict.fromkeys(fields, junk)
        _assert_no_server_error(client.get(url, everything), f"GET {url} all={junk[:20]!r}")
        _assert_no_server_error(client.post(url, everything), f"POST {url} all={junk[:20]!r}")
        _assert_no_server_error(client.post(url, everything, **htmx), f"htmx POST {url} all={junk[:20]!r}")
    lists = {name: ["1", "abc", "\x00"] for name in fields}
    _assert_no_server_error(client.post(url, lists), f"POST {url} every field thrice")
    for field in fields:
        _assert_no_server_error(client.post(url, {field: HUGE}, **htmx), f"POST {url} {field}=<600,000 x>")
    for body, content_type in RAW_BODIES:
        for method in ("post", "put", "patch", "delete"):
            response = getattr(client, method)(url, data=body, content_type=content_type)
            _assert_no_server_error(response, f"{method.upper()} {url} {body[:20]!r}")


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.parameters], ids=str)
def test_no_url_argument_is_a_server_error(member, endpoint):
    """Out-of-range ids and odd strings in the URL itself are a 404 like any object that is not there."""
    client, values = member
    has_ids = any(isinstance(values.get(name), int) for name in endpoint.parameters)
    for oddity in (0, 2**63, 10**30, "9" * 5000) if has_ids else ():
        odd = {name: oddity if isinstance(value, int) else value for name, value in values.items()}
        url = _url(endpoint, odd)
        for method in ("get", "post"):
            response = getattr(client, method)(url, {"step": values["step_id"], "prompt": "x", "title": "x"})
            assert response.status_code in {404, 405}, f"{method.upper()} {url}: {response.status_code}"
    for oddity in ("\x00", "x" * 3000, "\U0001f600", "%ff", " "):
        odd = {name: value if isinstance(value, int) else oddity for name, value in values.items()}
        odd |= {"key": oddity, "event": oddity}
        url = reverse(endpoint.name, kwargs={name: odd[name] for name in endpoint.parameters})
        for method in ("get", "post"):
            _assert_no_server_error(getattr(client, method)(url), f"{method.upper()} {url[:80]}")
