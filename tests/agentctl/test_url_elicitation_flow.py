"""URL-mode elicitation through a real agentctl and a scripted agent, over real sockets and pipes.

The agent sends what the Claude bridge 0.101.0 sends for an MCP server's
sign-in (``tests/fixtures/claude-agent-acp/0.101.0/url_elicitation.json``):
``elicitation/create`` in mode ``url``, then, once the page has done its work,
``elicitation/complete``. What the operator is shown is read off the stream's
notifications; what the agent received is what it echoed back.
"""

from __future__ import annotations

import pytest

from testing_support.agentctl import open_session
from testing_support.scripted_elicitation import COLOUR_FORM, SESSION, answered, elicit, in_a_turn, run_script

pytestmark = pytest.mark.asyncio

ELICITATION_ID = "ae031ec0-7b43-45d2-8014-1cf25fe63d73"
SIGN_IN = {
    "mode": "url",
    "sessionId": SESSION,
    "message": "Please authorize keysrv in your browser.",
    "url": "https://auth.example.test/authorize?x=1",
    "elicitationId": ELICITATION_ID,
}


def complete(elicitation_id: str = ELICITATION_ID) -> dict:
    return {"send": {"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": elicitation_id}}}


async def _signed_in(run) -> tuple[dict, dict]:
    requested = await run.requested()
    answer = await run.respond(requested["pending_id"])
    return requested, answer


async def test_flag_on_advertises_url_beside_form(start_agentctl, connect, scripted) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv([])))
    await open_session(client, elicitation=True, url=True)
    (initialize,) = scripted.received("initialize")
    assert initialize["params"]["clientCapabilities"]["elicitation"] == {"form": {}, "url": {}}


@pytest.mark.parametrize(("form", "url", "advertised"), [(True, False, {"form": {}}), (False, True, None)])
async def test_without_both_flags_url_is_not_advertised(start_agentctl, connect, scripted, form, url, advertised):
    client, _ = await connect(await start_agentctl(scripted.argv([])))
    await open_session(client, elicitation=form, url=url)
    (initialize,) = scripted.received("initialize")
    assert initialize["params"]["clientCapabilities"].get("elicitation") == advertised


async def test_accept_is_consent_and_complete_is_announced_once(start_agentctl, connect, scripted) -> None:
    steps = in_a_turn(
        {"send": elicit(0, SIGN_IN)},
        *answered(0),
        complete(),
        complete(),  # a second completion of a finished id is ignored
        complete("not-ours"),
    )
    run = await run_script(start_agentctl, connect, scripted, steps, url=True)
    requested, answer = await _signed_in(run)

    assert requested["mode"] == "url"
    assert requested["url"] == "https://auth.example.test/authorize?x=1"
    assert requested["elicitation_id"] == ELICITATION_ID
    assert requested["message"] == "Please authorize keysrv in your browser."
    assert requested["questions"] == []
    assert requested["tool_call_id"] is None
    assert answer == {"success": True, "action": "accept"}
    settled = await run.settled(requested["pending_id"])
    assert (settled["outcome"], settled["reason"], settled["content"]) == ("accepted", "operator", {})

    completed = await run.inbox.next("elicitation.completed")
    assert completed == {"pending_id": requested["pending_id"], "elicitation_id": ELICITATION_ID, "session_id": SESSION}
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "accept"}
    assert len(run.inbox.all("elicitation.completed")) == 1


async def test_decline_is_skip_and_a_later_completion_is_ignored(start_agentctl, connect, scripted) -> None:
    steps = in_a_turn({"send": elicit(0, SIGN_IN)}, *answered(0), complete())
    run = await run_script(start_agentctl, connect, scripted, steps, url=True)
    requested = await run.requested()
    await run.respond(requested["pending_id"], rejected=True)
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "decline"}
    assert run.inbox.all("elicitation.completed") == []


async def test_complete_while_open_withdraws_the_request(start_agentctl, connect, scripted) -> None:
    steps = in_a_turn({"send": elicit(0, SIGN_IN)}, complete(), *answered(0))
    run = await run_script(start_agentctl, connect, scripted, steps, url=True)
    requested = await run.requested()
    settled = await run.settled(requested["pending_id"])
    assert (settled["outcome"], settled["reason"]) == ("cancelled", "agent_completed")
    completed = await run.inbox.next("elicitation.completed")
    assert completed["pending_id"] == requested["pending_id"]
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "cancel"}


async def test_cancel_request_withdraws_it_as_it_does_a_form(start_agentctl, connect, scripted) -> None:
    withdraw = {"send": {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 0}}}
    steps = in_a_turn({"send": elicit(0, SIGN_IN)}, withdraw, *answered(0), complete())
    run = await run_script(start_agentctl, connect, scripted, steps, url=True)
    requested = await run.requested()
    settled = await run.settled(requested["pending_id"])
    assert (settled["outcome"], settled["reason"]) == ("cancelled", "agent_cancelled_request")
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "cancel"}
    assert run.inbox.all("elicitation.completed") == []  # withdrawn is finished: its completion is ignored


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://example.com/login", "http_not_loopback"),
        ("javascript:alert(document.cookie)", "not_https"),
        ("data:text/html,<b>hi</b>", "not_https"),
        ("https://bank.example@evil.example/", "credentials"),
        ("not a url", "malformed"),
    ],
)
async def test_an_address_not_shown_is_declined_at_once_with_its_reason(
    start_agentctl, connect, scripted, url, problem
) -> None:
    steps = in_a_turn({"send": elicit(0, {**SIGN_IN, "url": url})}, *answered(0))
    run = await run_script(start_agentctl, connect, scripted, steps, url=True, http_loopback=True)
    declined = await run.inbox.next("elicitation.declined")
    assert declined == {"session_id": SESSION, "reason": "url_refused", "problem": problem}
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "decline"}
    assert run.inbox.all("elicitation.requested") == []


@pytest.mark.parametrize(("loopback", "shown"), [(True, True), (False, False)])
async def test_http_to_localhost_only_where_the_web_app_allows_it(
    start_agentctl, connect, scripted, loopback, shown
) -> None:
    steps = in_a_turn({"send": elicit(0, {**SIGN_IN, "url": "http://127.0.0.1:8765/cb"})}, *answered(0))
    run = await run_script(start_agentctl, connect, scripted, steps, url=True, http_loopback=loopback)
    if shown:
        requested = await run.requested()
        await run.respond(requested["pending_id"])
    else:
        declined = await run.inbox.next("elicitation.declined")
        assert declined["problem"] == "http_loopback_not_allowed"
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "accept" if shown else "decline"}


async def test_with_url_mode_off_a_url_request_is_declined_as_before(start_agentctl, connect, scripted) -> None:
    steps = in_a_turn({"send": elicit(0, SIGN_IN)}, *answered(0), complete(), {"send": elicit(1, COLOUR_FORM)})
    run = await run_script(start_agentctl, connect, scripted, steps, url=False)
    requested = await run.requested()  # the form after it still reaches the operator
    assert "mode" not in requested
    assert run.echoed()[0]["result"] == {"action": "decline"}
    assert run.inbox.all("elicitation.declined") == []
    assert run.inbox.all("elicitation.completed") == []


async def test_neither_the_address_nor_the_message_reaches_agentctl_s_log(start_agentctl, connect, scripted, capfd):
    steps = in_a_turn(
        {"send": elicit(0, SIGN_IN)},
        *answered(0),
        complete(),
        {"send": elicit(1, {**SIGN_IN, "url": "javascript:alert('auth.example.test')"})},
        *answered(1),
    )
    env = {"KANDEV_AGENTCTL_LOG_LEVEL": "DEBUG"}
    run = await run_script(start_agentctl, connect, scripted, steps, url=True, env=env)
    requested = await run.requested()
    await run.respond(requested["pending_id"])
    await run.inbox.next("elicitation.completed")
    await run.inbox.next("elicitation.declined")
    await run.finished()
    logged = capfd.readouterr().err
    assert "elicitation" in logged  # it does say what happened
    for secret in ("auth.example.test", "authorize", "keysrv", "javascript"):
        assert secret not in logged
