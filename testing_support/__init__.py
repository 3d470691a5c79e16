"""What the test suites and the benchmarks share: one home for test support.

``tests/``, ``e2e/`` and ``benchmarks/`` import from here and never from each
other. It lives beside ``kandev_web`` rather than inside it, so the wheel
(``kandev_web*`` only) does not ship it; pytest finds it through the
``pythonpath`` option, ``python -m benchmarks.…`` from the working directory.
The modules are by job:

- :mod:`.fixtures`: the fixtures every suite shares (operators and their
  clients, workspace and board, factories for tasks, profiles, sessions and
  executions), registered by the root ``conftest.py``;
- :mod:`.processes` and :mod:`.deployment`: servers, ports, process groups, and
  runs under a deployment's clean environment (no pytest: the benchmarks use them);
- :mod:`.browser`, :mod:`.layout` and :mod:`.tcp_proxy`: what the browser specs share;
- :mod:`.fakes`: the services kandev-web talks to, played by the test;
- :mod:`.agentctl`: a kandev-agentctl started for a test, and what it streamed;
- :mod:`.executor`: an SSH executor host on this machine (scripts/test's sshd);
- :mod:`.agents`, :mod:`.scripted_elicitation` (and the ``scripted_agent.py``
  program): agents run behind a real kandev-agentctl;
- :mod:`.bridge`: the real Claude ACP bridge, run offline;
- :mod:`.sockets`, :mod:`.boards`, :mod:`.questions`, :mod:`.endpoints` and
  :mod:`.migrations`: data and scaffolding the unit tests share.
"""
