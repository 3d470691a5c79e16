"""Resuming an agent session whose agentctl died: when it can be, and recording how it went.

Agents that keep their sessions (the Claude bridge does) can take one up again
in a new process, through ACP ``session/resume`` or ``session/load``. When a
session's agentctl died, its agent with it, the operator may resume it: a new
agentctl is started for the session (``services.resume_session``, then
``Runner.resume``) and sends ``agent.session.resume`` with the agent's old
ACP session id (``docs/agent-stream.md#agentsessionresume-addition``). Whether
the agent can is what it advertised in ACP ``initialize``, recorded on each
execution as it starts.
"""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from kandev_web.agentctl.capabilities import resume_method

from . import events, workflow
from .models import AgentExecution, AuthorType, MessageType, TaskSession


def record_agent_capabilities(execution_id: int, capabilities: object) -> None:
    """What ``agent.initialize`` said the agent can do, kept for after the execution ends."""
    AgentExecution.objects.filter(pk=execution_id).update(
        agent_capabilities=capabilities if isinstance(capabilities, dict) else {}
    )


def resumable(session: TaskSession) -> bool:
    """Whether an operator may resume ``session``.

    Only an ended session whose agent opened an ACP session and went away on
    its own (no operator stopped it) and that said it can take a session up
    again. What it said is read from the newest execution that recorded it:
    a resume that failed before the agent answered ``initialize`` leaves the
    earlier answer standing.
    """
    if not (workflow.has_ended(session) and session.acp_session_id):
        return False
    executions = list(session.executions.order_by("-pk").values("ended_at", "stop_requested", "agent_capabilities"))
    if not executions or executions[0]["ended_at"] is None or executions[0]["stop_requested"]:
        return False
    said = next((each["agent_capabilities"] for each in executions if each["agent_capabilities"]), None)
    return resume_method(said) is not None


@transaction.atomic
def record_resumed(session_id: int, acp_session_id: str, answer: dict | None = None) -> None:
    """The agent took its session up again: it waits for the operator, and the timeline says which session.

    ``answer`` is agentctl's ``agent.session.resume`` answer: the modes and options the session has now.
    """
    session = TaskSession.objects.select_for_update().select_related("task").get(pk=session_id)
    if answer is not None:
        events.keep_offers(session, answer)
    workflow.session_resumed(session, acp_session_id)
    events.add_message(
        session,
        type=MessageType.STATUS,
        author=AuthorType.SYSTEM,
        content=_("Resumed the agent's session %(id)s.") % {"id": acp_session_id},
    )


@transaction.atomic
def record_resume_failed(session_id: int, execution_id: int, acp_session_id: str, reason: str) -> None:
    """Resuming failed: the new execution is over, and the session failed again, ready for another try.

    The execution is ended here, before its agentctl is stopped, so that
    agentctl's end is not reported as a second failure.
    """
    AgentExecution.objects.filter(pk=execution_id, ended_at__isnull=True).update(ended_at=timezone.now())
    session = TaskSession.objects.select_for_update().select_related("task").get(pk=session_id)
    error = _("The agent's session could not be resumed: %(reason)s") % {"reason": reason}
    workflow.resume_failed(session, acp_session_id, error)
    events.add_message(session, type=MessageType.ERROR, author=AuthorType.SYSTEM, content=error)
