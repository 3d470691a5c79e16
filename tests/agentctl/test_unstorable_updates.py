"""An agent's update with a NUL or a lone surrogate reaches the web app's stream client storable.

Over a real agentctl and a scripted agent that writes both as JSON escapes
(``\\u0000``, ``\\ud83d``), as any agent may: the stream client hands on
U+FFFD in their place (``storable``), so what it passes to the database is
what PostgreSQL can store.
"""

import pytest

from testing_support.agentctl import open_session, text_prompt

pytestmark = pytest.mark.asyncio


async def test_a_lone_surrogate_in_an_update_reaches_the_client_as_a_replacement(start_agentctl, connect, scripted):
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "half \ud83d, NUL \x00."}}
    steps = [
        {"expect": "session/prompt"},
        # json.dumps escapes both (\ud83d, \u0000): a line any agent may write.
        {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "sess-1", "update": update}}},
        {"reply": {"stopReason": "end_turn"}},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    sent = await inbox.next("session.update")
    assert sent["update"]["content"]["text"] == "half \ufffd, NUL \ufffd."
    assert (await inbox.next("turn.completed"))["stop_reason"] == "end_turn"
