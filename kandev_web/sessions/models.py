"""Task sessions, their turns and messages, and the agentctl executions serving them."""

from django.db import models
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from kandev_web.agents.models import AgentProfile, Executor, SealedTextField
from kandev_web.board.models import Task


class SessionState(models.TextChoices):
    CREATED = "CREATED", _("Created")
    STARTING = "STARTING", _("Starting")
    RUNNING = "RUNNING", _("Running")
    IDLE = "IDLE", _("Idle")
    WAITING_FOR_INPUT = "WAITING_FOR_INPUT", _("Waiting for input")
    COMPLETED = "COMPLETED", _("Completed")
    FAILED = "FAILED", _("Failed")
    CANCELLED = "CANCELLED", _("Cancelled")


ACTIVE_SESSION_STATES = (SessionState.RUNNING, SessionState.WAITING_FOR_INPUT)


class Activity(models.TextChoices):
    """What the agent is doing right now, finer than the session state."""

    NONE = "", _("Nothing")
    GENERATING = "generating", _("Generating")
    BACKGROUND = "background", _("Working in the background")


class TaskSessionQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(task__board__workspace__members=user)

    def with_current_turn(self):
        """Each session's newest turn as ``current_turn_id`` (``None`` before the first), read with the session."""
        return self.annotate(current_turn_id=current_turn_of(models.OuterRef("pk")))


def current_turn_of(session) -> models.Subquery:
    """The id of ``session``'s newest turn (an ``OuterRef`` to a session), inside a query about it."""
    return models.Subquery(Turn.objects.filter(session=session).order_by("-started_at", "-pk").values("pk")[:1])


class TaskSession(models.Model):
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="sessions")
    agent_profile = models.ForeignKey(
        AgentProfile, null=True, blank=True, on_delete=models.SET_NULL, related_name="sessions"
    )
    state = models.CharField(_("state"), max_length=32, choices=SessionState, default=SessionState.CREATED)
    activity = models.CharField(_("activity"), max_length=16, choices=Activity, blank=True, default="")
    acp_session_id = models.CharField(_("ACP session id"), max_length=200, blank=True)
    #: SHA-256 of the bearer token this session's agent uses for Kandev's MCP
    #: endpoint; the token itself exists only in the agent's session/new.
    mcp_token_hash = models.CharField(max_length=64, blank=True, db_index=True)
    error = models.TextField(_("error"), blank=True)
    #: What the agent last wrote to stderr before it failed (agentctl's
    #: ``stderr_tail``, capped): agent text, so shown escaped and never logged.
    error_output = models.TextField(_("last lines of the agent's stderr"), blank=True)
    # The agent's latest ACP ``usage_update`` (``usage``): its context window, and what the session cost so far.
    context_used = models.PositiveBigIntegerField(_("context tokens used"), null=True, blank=True)
    context_size = models.PositiveBigIntegerField(_("context window"), null=True, blank=True)
    cost = models.DecimalField(_("cost"), max_digits=16, decimal_places=6, null=True, blank=True)
    cost_currency = models.CharField(_("currency"), max_length=3, blank=True)
    #: What the agent offers the composer (``offers``): its modes (``{"current", "available"}``), its slash
    #: commands and its on/off options, as it last said. Agent text, kept cut down and shown escaped.
    modes = models.JSONField(default=dict, blank=True)
    commands = models.JSONField(default=list, blank=True)
    config_options = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TaskSessionQuerySet.as_manager()

    #: Its badge (``display.display_state``), set by the task page that shows it: no column.
    display_state: str

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"{self.task} · {self.get_state_display()}"


class UsageDay(models.Model):
    """What a session cost on one day (UTC), in one currency: the part of its cumulative cost reported that day.

    Agents report a session's cost so far; totals per day need what each day
    added, so each report adds its difference from the previous one here.
    """

    session = models.ForeignKey(TaskSession, on_delete=models.CASCADE, related_name="usage_days")
    day = models.DateField()
    currency = models.CharField(max_length=3)
    cost = models.DecimalField(max_digits=16, decimal_places=6, default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "day", "currency"], name="one_usage_row_per_session_day")
        ]

    def __str__(self):
        return f"{self.session_id} · {self.day} · {self.cost} {self.currency}"


class AgentExecution(models.Model):
    """One agentctl process serving one task session.

    Stored so that any web process can reach it: requests (prompt, cancel,
    answers) go to ``url`` with ``token`` from whichever process the operator
    is connected to. ``token`` is a credential: never log it.
    """

    session = models.ForeignKey(TaskSession, on_delete=models.CASCADE, related_name="executions")
    url = models.CharField(max_length=500, blank=True)
    token = SealedTextField(blank=True)
    pid = models.IntegerField(null=True, blank=True)
    #: Where agentctl was started: an executor host (and its id for the
    #: agentctl there), or the owning web machine when empty.
    executor = models.ForeignKey(Executor, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    launch_id = models.CharField(max_length=100, blank=True)
    runtime_flags = models.JSONField(default=dict, blank=True)
    #: What the agent said it can do in ACP ``initialize`` (agentctl's
    #: ``agent_capabilities``): whether its session can be resumed once this
    #: execution is gone (``resuming``).
    agent_capabilities = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    #: An operator asked it to stop, so its end is no failure. Stored, because
    #: the process applying ``agent.exited`` may not be the one that was asked.
    stop_requested = models.BooleanField(default=False)
    #: Whether the owning web process's stream to agentctl is up right now.
    stream_connected = models.BooleanField(default=True)
    #: The web process that holds the stream and applies what agentctl reports,
    #: and when it last said so; another process adopts the execution when the
    #: heartbeat goes stale (that process was killed or restarted).
    owner = models.CharField(max_length=200, blank=True)
    owner_heartbeat_at = models.DateTimeField(null=True, blank=True)
    #: The sequence number of the last notification of agentctl's that was
    #: applied, written in the transaction that applied it: whoever holds the
    #: stream next asks agentctl for what came after, and applies nothing twice.
    applied_seq = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["-started_at", "-pk"]

    def __str__(self):
        return self.url or super().__str__()

    @property
    def is_live(self) -> bool:
        return bool(self.url) and self.ended_at is None


class Turn(models.Model):
    session = models.ForeignKey(TaskSession, on_delete=models.CASCADE, related_name="turns")
    #: agentctl's turn id, from ``agent.prompt``.
    agent_turn_id = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    stop_reason = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["started_at", "pk"]

    def __str__(self):
        return self.agent_turn_id or super().__str__()


class MessageType(models.TextChoices):
    MESSAGE = "message"
    CONTENT = "content"
    TOOL_CALL = "tool_call"
    TOOL_EDIT = "tool_edit"
    TOOL_READ = "tool_read"
    TOOL_EXECUTE = "tool_execute"
    PROGRESS = "progress"
    LOG = "log"
    ERROR = "error"
    STATUS = "status"
    PERMISSION_REQUEST = "permission_request"
    CLARIFICATION_REQUEST = "clarification_request"
    SCRIPT_EXECUTION = "script_execution"
    THINKING = "thinking"
    AGENT_PLAN = "agent_plan"
    TODO = "todo"
    #: What a turn left changed in the task's worktree, against its base.
    WORKTREE_CHANGES = "worktree_changes"


class AuthorType(models.TextChoices):
    USER = "user", _("Operator")
    AGENT = "agent", _("Agent")
    SYSTEM = "system", _("System")


class Message(models.Model):
    session = models.ForeignKey(TaskSession, on_delete=models.CASCADE, related_name="messages")
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.CASCADE, related_name="messages")
    type = models.CharField(max_length=32, choices=MessageType, default=MessageType.MESSAGE)
    author_type = models.CharField(max_length=16, choices=AuthorType, default=AuthorType.AGENT)
    content = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    requests_input = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [
            models.Index(fields=["session", "-created_at", "-id"]),
            models.Index(fields=["turn", "type"]),
        ]

    def __str__(self):
        return f"{self.get_author_type_display()} · {Truncator(self.content).chars(60)}"
