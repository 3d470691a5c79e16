"""What an operator does with agent sessions: start, prompt, cancel, stop, answer.

Writes happen in a transaction and work for the agent is handed to the runner
after commit, so an agent never hears of a session the database rolled back.
Requests to agentctl are sent from whichever web process the operator uses.
"""

from django.db import transaction
from django.utils.translation import gettext as _

from kandev_web.agentctl.stream_client import AgentStreamNotConnected, Conflict, NotFound, StreamError
from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Task
from kandev_web.db import database_sync_to_async
from kandev_web.flags.services import runtime_flags
from kandev_web.repositories.worktrees import WorktreeError, ensure_worktree

from . import events, offers, workflow
from .display import turn_open_reason
from .launching import LaunchPlan, agent_environment
from .mcp_tokens import mcp_server_for_agent, new_token
from .models import AgentExecution, AuthorType, MessageType, SessionState, TaskSession, Turn
from .pending import pending_actions
from .resuming import resumable
from .routing import Endpoint
from .runner import runner


class SessionActionError(Exception):
    """An operator's action could not be carried out; the message says why, for them."""


class AlreadySettled(SessionActionError):
    pass


def text_prompt(text: str) -> list[dict]:
    return [{"type": "text", "text": text}]


def start_session(task: Task, profile: AgentProfile, prompt: str, mcp_url: str) -> TaskSession:
    """Start an agent on ``task``; it reaches Kandev's MCP tools at ``mcp_url`` with a token of its own.

    A task on a repository works in its worktree, made here (in the request's
    thread, off the server's loop) the first time; a failure to make it starts
    nothing and says why.
    """
    workdir = _workdir(task, profile)
    mcp_token, mcp_token_hash = new_token()
    with transaction.atomic():
        session = TaskSession.objects.create(task=task, agent_profile=profile, mcp_token_hash=mcp_token_hash)
        execution = _new_execution(session, profile)
        turn = Turn.objects.create(session=session)
        events.add_message(session, type=MessageType.MESSAGE, author=AuthorType.USER, content=prompt)
        workflow.session_started(session)
        plan = _launch_plan(session, execution, profile, workdir, mcp_server_for_agent(mcp_url, mcp_token))
        transaction.on_commit(lambda: runner.submit(runner.start(plan, text_prompt(prompt), turn.pk)))
    return session


def resume_session(session: TaskSession, mcp_url: str) -> None:
    """Start a new agentctl for a session whose agent died, to take its ACP session up again (``resuming``).

    The agent reaches Kandev's MCP tools with a new token: the old one went
    to the agent that died, in its ``session/new``.
    """
    profile = session.agent_profile
    if profile is None:
        raise SessionActionError(_("This session's agent profile was deleted, so it cannot be resumed."))
    _refuse_unless_resumable(session)  # before its worktree is restored for nothing
    workdir = _workdir(session.task, profile)
    mcp_token, mcp_token_hash = new_token()
    with transaction.atomic():
        session = TaskSession.objects.select_for_update().select_related("task__board").get(pk=session.pk)
        _refuse_unless_resumable(session)  # again, locked: of two clicks at once, one resumes
        acp_session_id = session.acp_session_id
        session.mcp_token_hash = mcp_token_hash
        session.save(update_fields=["mcp_token_hash"])
        execution = _new_execution(session, profile)
        workflow.resume_requested(session)
        plan = _launch_plan(session, execution, profile, workdir, mcp_server_for_agent(mcp_url, mcp_token))
        transaction.on_commit(lambda: runner.submit(runner.resume(plan, acp_session_id)))


def _refuse_unless_resumable(session: TaskSession) -> None:
    # Only the task's newest session: an agent may already work on the task in a newer one.
    newest = TaskSession.objects.filter(task_id=session.task_id).values_list("pk", flat=True).first()
    if newest != session.pk or not resumable(session):
        raise SessionActionError(_("This session cannot be resumed."))


def _workdir(task: Task, profile: AgentProfile) -> str:
    """Where the agent works: the task's worktree, made here (off the server's loop) the first time, or the profile's.

    A failure to make it starts nothing and says why.
    """
    try:
        worktree = ensure_worktree(task.pk, profile)
    except WorktreeError as error:
        raise SessionActionError(str(error)) from None
    return worktree.path if worktree is not None else profile.working_dir


def _new_execution(session: TaskSession, profile: AgentProfile) -> AgentExecution:
    return AgentExecution.objects.create(session=session, runtime_flags=runtime_flags(), executor=profile.executor)


def _launch_plan(
    session: TaskSession, execution: AgentExecution, profile: AgentProfile, workdir: str, kandev_mcp: dict
) -> LaunchPlan:
    executor = profile.executor
    return LaunchPlan(
        task_id=session.task_id,
        session_id=session.pk,
        execution_id=execution.pk,
        agent_id=profile.agent_id,
        argv=[str(arg) for arg in profile.command],
        env=agent_environment(profile.env, remote=executor is not None),
        workdir=workdir,
        runtime_flags=execution.runtime_flags,
        mcp_servers=[kandev_mcp, *profile.mcp_servers],
        auth_method=profile.auth_method,
        gateway_base_url=profile.gateway_base_url,
        config_options=dict(profile.config_options or {}),
        executor=executor.address if executor else None,
        secret_env=dict(profile.secret_env),
    )


def live_execution(session: TaskSession) -> AgentExecution | None:
    return session.executions.filter(ended_at__isnull=True).select_related("executor").first()


def _endpoint(session: TaskSession) -> Endpoint:
    execution = live_execution(session)
    if execution is None:
        raise SessionActionError(_("The agent is not running any more."))
    return Endpoint(
        execution.pk, execution.url, execution.token, via=execution.executor.address if execution.executor else None
    )


async def _request(endpoint: Endpoint, action: str, payload: dict) -> dict:
    """One request to the session's agentctl, on the server loop, its failures in the operator's words."""
    try:
        return await runner.request(endpoint, action, payload)
    except AgentStreamNotConnected:
        raise SessionActionError(_("The agent could not be reached; nothing was sent.")) from None
    except TimeoutError:
        raise SessionActionError(_("The agent did not answer in time.")) from None


def _send(session: TaskSession, action: str, payload: dict) -> dict:
    """``_request`` from a sync view's thread."""
    return runner.call(_request(_endpoint(session), action, payload))


class TurnOpen(SessionActionError):
    """A prompt while the agent's turn is still open: refused, and nothing is recorded.

    agentctl takes one prompt per turn (``CONFLICT`` otherwise) and Kandev
    queues none, so the operator is told what the turn waits for instead.
    """


def _refuse_while_turn_open(session: TaskSession) -> None:
    """Raise ``TurnOpen`` while ``session`` cannot take a prompt; its row is locked by the caller."""
    if workflow.has_ended(session):
        raise SessionActionError(_("The agent is not running any more."))
    if not session.acp_session_id:
        raise TurnOpen(_("The agent is still starting. Wait for it; your message is kept here."))
    turn = events.current_turn(session)
    if session.state == SessionState.RUNNING or (turn is not None and turn.completed_at is None):
        waiting_for = pending_actions(TaskSession.objects.filter(pk=session.pk)).get(session.pk)
        raise TurnOpen(turn_open_reason(waiting_for))


def _begin_turn(session_id: int, prompt: str) -> tuple[Endpoint, str, int]:
    """Record the operator's prompt as a new turn; return where to send it, the ACP session and the turn.

    Refused before anything is written while a turn is open: the session row
    is locked, so of two prompts sent at once one opens the turn and the other
    is refused.
    """
    with transaction.atomic():
        session = TaskSession.objects.select_for_update().select_related("task__board").get(pk=session_id)
        _refuse_while_turn_open(session)
        endpoint = _endpoint(session)
        turn = Turn.objects.create(session=session)
        events.add_message(session, type=MessageType.MESSAGE, author=AuthorType.USER, content=prompt)
        workflow.prompt_sent(session)
    return endpoint, session.acp_session_id, turn.pk


async def _deliver_prompt(prompt: str, endpoint: Endpoint, acp_session_id: str, turn_id: int) -> None:
    """Send the recorded prompt to agentctl; one that does not get there closes its turn as not delivered."""
    refusal: type[SessionActionError]
    try:
        answer = await _request(endpoint, "agent.prompt", {"session_id": acp_session_id, "prompt": text_prompt(prompt)})
    except Conflict:
        # Another client's prompt got there first: agentctl holds one turn per session.
        reason, refusal = _("the agent is busy with another turn."), TurnOpen
    except SessionActionError as error:
        reason, refusal = str(error), SessionActionError
    except StreamError as error:
        reason, refusal = _("the agent refused it (%(code)s).") % {"code": error.code}, SessionActionError
    else:
        await database_sync_to_async(events.record_prompt_sent)(turn_id, answer["turn_id"])
        return
    await database_sync_to_async(events.record_prompt_not_delivered)(turn_id, reason)
    raise refusal(_("Your message was not delivered: %(reason)s") % {"reason": reason})


async def send_prompt_async(session_id: int, prompt: str) -> None:
    """A follow-up prompt: a new turn on the same ACP session, awaited on the server loop."""
    begun = await database_sync_to_async(_begin_turn)(session_id, prompt)
    await _deliver_prompt(prompt, *begun)


def send_prompt(session: TaskSession, prompt: str) -> None:
    """A follow-up prompt from a sync view: refused here, in the request's thread, while a turn is open."""
    begun = _begin_turn(session.pk, prompt)
    runner.call(_deliver_prompt(prompt, *begun))


def cancel_turn(session: TaskSession) -> None:
    try:
        _send(session, "agent.cancel", {"session_id": session.acp_session_id})
    except StreamError as error:
        raise SessionActionError(str(error)) from None


def set_mode(session: TaskSession, mode_id: str) -> None:
    """Switch the agent to another of the modes its session offers; its composers show the new one.

    Allowed while a turn is open: ACP lets the mode change at any time, and the agent takes it from its next step.
    """
    if not offers.offers_mode(session.modes, mode_id):
        raise SessionActionError(_("The agent does not offer that mode (any more)."))
    _send_setting(session, "agent.session.set_mode", {"session_id": session.acp_session_id, "mode_id": mode_id})
    events.record_mode_set(session.pk, mode_id)


def set_config_option(session: TaskSession, config_id: str, value: bool) -> None:
    """Turn one of the agent's on/off options on or off; the agent answers with all its options as they now are."""
    if not offers.offers_option(session.config_options, config_id):
        raise SessionActionError(_("The agent does not offer that option (any more)."))
    payload = {"session_id": session.acp_session_id, "config_id": config_id, "value": value}
    answer = _send_setting(session, "agent.session.set_config_option", payload)
    if isinstance(answer.get("config_options"), list):
        events.record_options_set(session.pk, answer["config_options"])


def _send_setting(session: TaskSession, action: str, payload: dict) -> dict:
    if not session.acp_session_id or workflow.has_ended(session):
        raise SessionActionError(_("The agent is not running any more."))
    try:
        return _send(session, action, payload)
    except StreamError as error:
        raise SessionActionError(_("The agent refused the change: %(reason)s") % {"reason": error.message}) from None


def stop_session(session: TaskSession) -> None:
    execution = live_execution(session)
    if execution is None:
        raise SessionActionError(_("The agent is not running any more."))
    AgentExecution.objects.filter(pk=execution.pk).update(stop_requested=True)
    runner.call(runner.shutdown(Endpoint(execution.pk, execution.url, execution.token)))


def respond_permission(session: TaskSession, pending_id: str, option_id: str | None) -> None:
    """Answer a permission request; ``option_id=None`` cancels it."""
    payload = (
        {"pending_id": pending_id, "option_id": option_id}
        if option_id
        else {"pending_id": pending_id, "cancelled": True}
    )
    try:
        _send(session, "agent.permissions.respond", payload)
    except NotFound:
        raise AlreadySettled(_("This request was already answered.")) from None
    except StreamError as error:
        raise SessionActionError(str(error)) from None
