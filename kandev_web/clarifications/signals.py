"""What other apps may react to in a question's life, without clarifications knowing them.

Sent with ``sender=Clarification`` and ``record``, its ``session`` and task
read, inside the transaction that records the change (as ``sessions.signals``
are): what a receiver writes commits with the question or not at all, and
what must wait for the commit it hands to ``transaction.on_commit``.
"""

from django.dispatch import Signal

#: A new question is on every open page of its task and in every inbox; its
#: timeline rows are not written yet. For what should reach operators as soon
#: as they can answer (a notification); ``question_asked`` follows.
question_shown = Signal()

#: A question is asked in full: its timeline rows written, the task waiting
#: on it. Once per question, though agentctl may announce it again.
question_asked = Signal()

#: A pending question ended: answered, skipped, timed out or withdrawn (``record.status``).
question_settled = Signal()
