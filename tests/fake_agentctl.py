"""agentctl as the web app's answer service sees it, for tests that need no real process."""

import asyncio


class FakeRunner:
    """Records each request; answers with ``answer``, raises it if it is an exception, or never (``"hang"``)."""

    def __init__(self, answer):
        self.sent, self.answer = [], answer
        #: The endpoints a page opened a connection to ahead of an answer (``Runner.reach``).
        self.reached = []

    async def reach(self, endpoint):
        self.reached.append(endpoint)

    async def request(self, endpoint, action, payload, timeout=None, *, ordered=True):
        self.sent.append((action, payload))
        if self.answer == "hang":
            await asyncio.Event().wait()
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer
