"""Log lines a deployer can search: one JSON object each, with the ids of the request or agent work they are about."""

import io
import json
import logging

import pytest
from asgiref.sync import async_to_sync
from channels.testing import HttpCommunicator
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.stream_client import StreamEvent
from kandev_web.asgi import application
from kandev_web.logs import ContextIds, bound, json_formatter
from kandev_web.sessions import runner, signals
from testing_support.sockets import HOST


@pytest.fixture
def json_lines():
    """What the root logger writes through the JSON formatter, as parsed objects."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(json_formatter())
    handler.addFilter(ContextIds())
    root = logging.getLogger()
    root.addHandler(handler)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)


ids = st.one_of(st.integers(min_value=1), st.text(min_size=1, max_size=40))


@given(message=st.text(), execution=ids, session=ids)
def test_every_record_is_one_json_line_with_time_level_logger_and_the_ids_bound(message, execution, session):
    record = logging.LogRecord("kandev_web.sessions.runtime", logging.WARNING, __file__, 1, "%s", (message,), None)
    formatter, ids_filter = json_formatter(), ContextIds()

    with bound(execution_id=execution, session_id=session):
        ids_filter.filter(record)
    line = formatter.format(record)

    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["message"] == message
    assert parsed["level"] == "WARNING"
    assert parsed["logger"] == "kandev_web.sessions.runtime"
    assert (parsed["execution_id"], parsed["session_id"]) == (str(execution), str(session))
    assert parsed["time"].endswith("+00:00")


def test_ids_are_unbound_after_their_block_and_absent_from_lines_outside_it(json_lines):
    with bound(execution_id=4):
        logging.getLogger("kandev_web").warning("inside")
    logging.getLogger("kandev_web").warning("outside")

    inside, outside = json_lines()
    assert inside["execution_id"] == "4"
    assert "execution_id" not in outside


def _get(path: str, headers=()) -> dict:
    async def get():
        return await HttpCommunicator(application, "GET", path, headers=[HOST, *headers]).get_response(timeout=20)

    response = async_to_sync(get)()
    return {name.decode(): value.decode() for name, value in response["headers"]}


@pytest.mark.django_db(transaction=True)
def test_a_request_s_lines_name_the_id_its_response_returns(json_lines):
    headers = _get("/no-such-page/")

    not_found = [line for line in json_lines() if line["logger"] == "django.request"]
    assert not_found
    assert not_found[0]["request_id"] == headers["x-request-id"]


@pytest.mark.django_db(transaction=True)
def test_a_proxy_s_request_id_is_kept_and_a_malformed_one_replaced():
    assert _get("/healthz", [(b"x-request-id", b"lb-7f3a9c2e")])["x-request-id"] == "lb-7f3a9c2e"
    replaced = _get("/healthz", [(b"x-request-id", b"x; Set-Cookie: a=b")])["x-request-id"]
    assert len(replaced) == 32
    assert replaced.isalnum()


@pytest.mark.django_db(transaction=True)
def test_lines_logged_while_an_agent_event_is_applied_name_its_execution_and_session(json_lines):
    def log(sender, **kwargs):
        logging.getLogger("kandev_web").info("seen")

    # A notification the runner relays: the clarifications app ignores one with no reason.
    signals.elicitation_declined.connect(log)
    try:
        async_to_sync(runner.Runner()._apply)(
            runner.ExecutionRef(session_id=7, execution_id=12), StreamEvent("elicitation.declined", {}, seq=None)
        )
    finally:
        signals.elicitation_declined.disconnect(log)

    (line,) = [line for line in json_lines() if line["message"] == "seen"]
    assert (line["execution_id"], line["session_id"]) == ("12", "7")
