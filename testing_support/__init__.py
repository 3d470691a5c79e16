"""What the test suites and the benchmarks share: one home for test support.

``tests/``, ``e2e/`` and ``benchmarks/`` import from here and never from each
other. It lives beside ``kandev_web`` rather than inside it, so the wheel
(``kandev_web*`` only) does not ship it. The modules are by job:

- :mod:`.processes`: servers, ports and process groups (no pytest: the benchmarks use it);
- :mod:`.fakes`: the services kandev-web talks to, played on loopback;
- :mod:`.bridge` and :mod:`.fake_messages_api`: the real Claude ACP bridge, run offline;
- :mod:`.browser` and :mod:`.layout`: Playwright steps the browser specs share;
- :mod:`.sockets`: the socket tests' scaffolding;
- :mod:`.fixtures`: the pytest fixtures every suite shares, registered by the root ``conftest.py``.
"""
