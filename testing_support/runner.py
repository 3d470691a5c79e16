"""A stand-in for the web process's Runner: the requests an answer makes of agentctl, answered as the test says."""

import asyncio

from kandev_web.db import agent_sync_to_async, database_sync_to_async
from kandev_web.sessions import signals
from kandev_web.sessions.runner import Runner


class FakeRunner:
    """Records each request; answers with ``answer``, raises it if it is an exception, or never (``"hang"``).

    A successful ``agent.elicitations.respond`` is settled as agentctl settles
    it: ``elicitation.settled`` (echoing the answer's ``answer_ref``) reaches
    the stream's owner before the response does. With ``settles=False`` it
    does not, until the test says (:meth:`settle_sent`): the owner applies it
    after the answering page was told. The owner is this process, which
    applies what agentctl announces in the agent runner's thread as the real
    runner does, unless ``owner=False``: another process, which applies it in
    a thread of its own.
    """

    def __init__(self, answer, *, settles=True, owner=True):
        self.sent, self.answer, self.settles, self.owner = [], answer, settles, owner
        #: The endpoints a page opened a connection to ahead of an answer (``Runner.reach``).
        self.reached = []

    def owns(self, execution_id):
        return self.owner

    async def reach(self, endpoint):
        self.reached.append(endpoint)

    async def request(self, endpoint, action, payload, timeout=None, *, ordered=True):
        self.sent.append((action, payload))
        if self.answer == "hang":
            await asyncio.Event().wait()
        if isinstance(self.answer, Exception):
            raise self.answer
        if action == "agent.elicitations.respond" and self.settles:
            apply = agent_sync_to_async if self.owner else database_sync_to_async
            await apply(self._settle)(payload)
        return self.answer

    def settle_sent(self):
        """Settle the last answer sent, as agentctl announces it to the stream's owner."""
        [payload] = [payload for action, payload in self.sent if action == "agent.elicitations.respond"][-1:]
        self._settle(payload)

    def _settle(self, payload):
        rejected = payload.get("rejected") is True
        settled = {
            "pending_id": payload["pending_id"],
            "outcome": "declined" if rejected else "accepted",
            "reason": "operator_skipped" if rejected else "operator",
        }
        if not rejected:
            settled["content"] = self.answer.get("content", {})
            if "withheld" in self.answer:
                settled["withheld"] = self.answer["withheld"]
        if "answer_ref" in payload:
            settled["answer_ref"] = payload["answer_ref"]
        signals.elicitation_settled.send(Runner, session_id=None, execution_id=None, payload=settled)
