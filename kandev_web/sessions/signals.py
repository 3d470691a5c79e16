"""What other apps may want to react to in a session's life, without sessions knowing them.

Sent inside the transaction that records the change.
"""

from django.dispatch import Signal

#: A turn ended (``session``, ``turn``, ``stop_reason``).
turn_ended = Signal()

#: The agent process is gone (``session``); nothing more will reach it.
agent_gone = Signal()
