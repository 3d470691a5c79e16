"""agentctl: one process per agent execution, between an ACP agent and the web app.

It runs the agent over stdio and serves the agent stream WebSocket
(``docs/agent-stream.md``). It imports nothing from Django.

- ``cli``            the ``kandev-agentctl`` command: argv, token, ready line, signals
- ``server``         the WebSocket endpoint: bearer auth, one ordered outbox per client
- ``envelope``       the stream's frames and error codes
- ``controller``     what each action does; sessions and turns
- ``acp_client``     the agent process and the ACP client side of its stdio
- ``jsonrpc``        newline-delimited JSON-RPC, ids matched by value
- ``permissions``    parked ``session/request_permission`` requests
- ``elicitations``   the seam that answers ``elicitation/create``
- ``elicitation/``   ACP form elicitation, the pure half (mapping, validation)
- ``capabilities``   the client capabilities advertised in ``initialize``
- ``durations``      the answer and idle timeouts (``docs/decisions/life-of-a-question.md#f13a-timeouts``)
- ``stream_client``  an asyncio client of the stream, for the web app and tests
- ``launcher``       start agentctl as a child process and read its ready line
"""
