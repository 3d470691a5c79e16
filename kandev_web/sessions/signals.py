"""What other apps may want to react to in a session's life, without sessions knowing them.

``turn_ended`` and ``agent_gone`` are sent inside the transaction that
records the change. The rest come from the runner (``runner``), on the
process owning the execution's stream; receivers are told ``session_id`` and
``execution_id``.
"""

from django.dispatch import Signal

#: A turn ended (``session``, ``turn``, ``stop_reason``).
turn_ended = Signal()

#: The agent process is gone (``session``, ``execution_id``); nothing more will
#: reach it. ``agentctl_gone`` when agentctl went with it, settling nothing it held.
agent_gone = Signal()

# agentctl's notifications that the runner does not apply itself
# (docs/agent-stream.md), one signal each, with agentctl's ``payload``. Each is
# sent exactly once, in the order agentctl sent them, in the runner's database
# thread, inside the transaction that counts the notification applied
# (``ownership.count_applied``): what a receiver writes commits with that
# count or not at all. A receiver's exception ends the dispatch (``Signal.send``, never
# ``send_robust``) and is the runner's to log, as a notification it could not
# apply; ``ObjectDoesNotExist`` means the task was deleted meanwhile.

#: An agent asks the operator a question (``elicitation.requested``).
elicitation_requested = Signal()

#: agentctl settled a question: answered, skipped, timed out or withdrawn (``elicitation.settled``).
elicitation_settled = Signal()

#: agentctl declined a question without asking anyone (``elicitation.declined``).
elicitation_declined = Signal()

#: The agent said a page the operator was asked to open has done its work (``elicitation.completed``, URL mode).
elicitation_completed = Signal()

#: The owning stream connected again after a drop, or this process adopted
#: the execution (``client``, the stream's ``AgentStreamClient``): what was
#: announced meanwhile may have been missed. Receivers are coroutines that
#: catch up through ``client``, awaited (``Signal.asend``, side by side with
#: one another) once the execution is recorded as connected.
stream_reconnected = Signal()
