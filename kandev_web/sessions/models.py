import functools
import logging
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from kandev_web import git
from kandev_web.board.models import Task, Workspace
from kandev_web.executor.address import SshAddress
from kandev_web.forms import SecretEnvChange
from kandev_web.secret_box import SecretBox, SecretUnreadable

logger = logging.getLogger(__name__)


def secret_box() -> SecretBox:
    """The deployment's key ring (``KANDEV_SECRETS_KEY``), for sealing and opening secrets at rest."""
    return _key_ring(tuple(settings.KANDEV_SECRETS_KEYS))


@functools.lru_cache(maxsize=4)
def _key_ring(keys: tuple[bytes, ...]) -> SecretBox:
    # Every execution row read opens its token: the ring is built once per key list, not per row.
    return SecretBox(list(keys))


class SealedTextField(models.TextField):
    """A credential stored sealed with ``KANDEV_SECRETS_KEY``: the database and its backups never hold it in clear.

    Read back opened. Never looked up by (a value seals differently each
    time); empty stays empty. One that no configured key opens reads as
    empty, logged by field name only: the rows around it stay readable, and
    what needed it (an agentctl's stream, an executor host) fails to connect.
    """

    def from_db_value(self, value, expression, connection):
        if not value:
            return value
        try:
            return secret_box().open(self.name, value)
        except SecretUnreadable:
            logger.warning(
                "%s.%s: a stored value opens with no key of KANDEV_SECRETS_KEY", self.model.__name__, self.name
            )
            return ""

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return secret_box().seal(value) if value else value


class Executor(models.Model):
    """A machine where agents run apart from the web processes.

    The web process logs in there over SSH, starts one agentctl per
    execution bound to that host's loopback, and tunnels its stream back
    through the connection (``kandev_web/executor/ssh.py``); the host's key
    must be the one recorded here. ``private_key`` is a credential: never log it.
    """

    name = models.CharField(_("name"), max_length=200, unique=True)
    host = models.CharField(_("SSH host"), max_length=255)
    port = models.PositiveIntegerField(_("SSH port"), default=22)
    user = models.CharField(_("SSH user"), max_length=100, blank=True)
    host_key = models.TextField(
        _("host key"),
        blank=True,
        help_text=_("The host's public key, as a known_hosts line (the output of ssh-keyscan -t ed25519 HOST)."),
    )
    private_key = SealedTextField(
        _("private key"), blank=True, help_text=_("The login's OpenSSH private key; empty uses KANDEV_SSH_KEY_FILE.")
    )
    agentctl = models.CharField(
        _("agentctl command"),
        max_length=500,
        default="kandev-agentctl",
        help_text=_("kandev-agentctl on that host: a path, or a name on the login's PATH."),
    )
    workdir_root = models.CharField(
        _("working directories"),
        max_length=500,
        default="kandev-workdirs",
        help_text=_("Where agents work there when a profile names no directory; relative to the login's home."),
    )
    worktree_root = models.CharField(
        _("worktrees"),
        max_length=500,
        default="kandev-worktrees",
        help_text=_("Where tasks' worktrees are made there, for its repositories; relative to the login's home."),
    )

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def clean(self):
        super().clean()
        if not self.user:
            raise ValidationError({"user": _("Give the user to log in as on that host.")})
        if not self.host_key.strip():
            raise ValidationError({"host_key": _("Record the host's key (ssh-keyscan HOST): no key, no connection.")})

    @property
    def address(self) -> SshAddress:
        """What the runner needs to reach it over SSH."""
        return SshAddress(
            host=self.host,
            port=self.port,
            user=self.user,
            host_key=self.host_key,
            agentctl=self.agentctl,
            workdir_root=self.workdir_root,
            worktree_root=self.worktree_root,
            private_key=self.private_key,
            key_file=settings.KANDEV_SSH_KEY_FILE,
        )


class AgentProfileQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(workspace__members=user)


def validate_mcp_servers(value):
    """A profile's own MCP servers: a list of ACP ``McpServer`` objects, each with a name of its own.

    Only their shape is checked here; what each field means is the agent's
    business (ACP ``session/new``), and an agent refusing one fails the start
    with its own words.
    """
    if not isinstance(value, list) or not all(isinstance(server, dict) for server in value):
        raise ValidationError(_("Give a JSON list of MCP server objects."))
    names = [server.get("name") for server in value]
    if not all(isinstance(name, str) and name.strip() for name in names):
        raise ValidationError(_("Every MCP server needs a name."))
    if len(set(names)) != len(names):
        raise ValidationError(_("Two MCP servers have the same name."))


class AgentProfile(models.Model):
    """How to start one kind of ACP agent: the command agentctl runs over stdio.

    ``env`` is shown and edited in clear; ``secret_env`` (API keys, tokens) is
    write-only: each value sealed (``kandev_web/secret_box.py``), its name
    readable, its value opened only when an agent is launched
    (``sessions.launching``). Nothing renders, logs or ``repr``s a value.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="agent_profiles")
    name = models.CharField(_("name"), max_length=200)
    agent_id = models.CharField(
        _("agent id"), max_length=100, help_text=_("The agent's registry id, e.g. claude-acp.")
    )
    command = models.JSONField(_("command"), help_text=_("argv, as a JSON list of strings."))
    env = models.JSONField(_("environment"), default=dict, blank=True)
    #: ``{name: Fernet token}``. Not editable as such: forms edit it through
    #: ``kandev_web.forms.SecretEnvField``, which never sends a value back.
    secret_env = models.JSONField(_("secrets"), default=dict, blank=True, editable=False)
    working_dir = models.CharField(_("working directory"), max_length=500, blank=True)
    mcp_servers = models.JSONField(
        _("MCP servers"),
        default=list,
        blank=True,
        validators=[validate_mcp_servers],
        help_text=_(
            "Further MCP servers the agent is given when a session starts, beside Kandev's own: "
            'a JSON list of ACP McpServer objects, e.g. {"name": "docs", "command": "/usr/bin/docs-mcp", '
            '"args": [], "env": []}.'
        ),
    )
    auth_method = models.CharField(
        _("auth method"),
        max_length=200,
        blank=True,
        help_text=_(
            "The id of the ACP auth method Kandev signs in with before it opens a session, from those the agent "
            "offers (e.g. gemini-api-key); empty signs in only when the agent asks and one needs nobody."
        ),
    )
    executor = models.ForeignKey(
        Executor,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="agent_profiles",
        verbose_name=_("executor"),
        help_text=_("The machine the agent runs on; empty runs it on the web machine that starts it."),
    )

    #: What the last "Check" found (``profile_checks``): agentctl's initialize
    #: answer, or why there is none. Agent text: shown escaped, never logged.
    last_check = models.JSONField(_("last check"), default=dict, blank=True, editable=False)
    checked_at = models.DateTimeField(_("checked at"), null=True, blank=True, editable=False)

    objects = AgentProfileQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self):
        return self.name

    @property
    def secret_names(self) -> list[str]:
        return sorted(self.secret_env)

    def set_secret(self, name: str, value: str) -> None:
        """Seal ``value`` as the secret ``name`` (replacing any); saved with the profile."""
        self.apply_secret_change(SecretEnvChange(values={name: value}))

    def apply_secret_change(self, change: SecretEnvChange) -> None:
        """What a ``SecretEnvField`` was given: values sealed, names cleared; saved with the profile."""
        box = secret_box()
        kept = {name: token for name, token in self.secret_env.items() if name not in change.cleared}
        self.secret_env = {**kept, **{name: box.seal(value) for name, value in change.values.items()}}

    def clean(self):
        super().clean()
        both = sorted(set(self.env or {}) & set(self.secret_env))
        if both:
            raise ValidationError(
                {"env": _("%(names)s is also a secret; keep each variable in one place.") % {"names": ", ".join(both)}}
            )


class RepositoryQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(workspace__members=user)


class Repository(models.Model):
    """A git repository a workspace's agents work on, each task in a worktree of its own.

    ``path`` is on the web machine, or on ``executor``'s host when one is
    named (its agents must then run there too).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="repositories")
    name = models.CharField(_("name"), max_length=200)
    path = models.CharField(_("path"), max_length=500, help_text=_("The repository's absolute path on its machine."))
    default_branch = models.CharField(
        _("default branch"),
        max_length=200,
        blank=True,
        help_text=_("Where a task's branch starts unless the task names another; empty: detected from the repository."),
    )
    executor = models.ForeignKey(
        Executor,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="repositories",
        verbose_name=_("executor"),
        help_text=_("The machine the repository is on; empty: the web machine."),
    )

    objects = RepositoryQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]
        verbose_name_plural = _("repositories")
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="unique_repository_name")]

    def __str__(self):
        return self.name

    def clean(self):
        # Validating a repository asks its machine; merely loading the models must not import the SSH client.
        from .hosts import checkouts

        super().clean()
        if not Path(self.path).is_absolute():
            raise ValidationError({"path": _("Give the repository's absolute path.")})
        try:
            found = checkouts(self).inspect(self.path, self.default_branch)
        except git.GitError as error:
            if error.failure is git.Failure.NO_SUCH_REF:
                raise ValidationError(
                    {"default_branch": _("The repository has no branch %(branch)s.") % {"branch": error.detail}}
                ) from None
            if error.failure is git.Failure.GIT_MISSING:
                raise ValidationError(_("git is not installed on the repository's machine.")) from None
            if error.failure is git.Failure.UNREACHABLE:
                raise ValidationError(
                    _("%(executor)s could not be reached to check the repository: %(detail)s")
                    % {"executor": self.executor, "detail": error.detail}
                ) from None
            raise ValidationError({"path": _("%(path)s is not a git repository.") % {"path": self.path}}) from None
        self.path, self.default_branch = found["path"], found["default_branch"]


class Worktree(models.Model):
    """Where a task's agents work: its own branch of a repository, checked out in a directory of its own.

    Named when the task is made; ``branch`` and ``path`` are set when the
    first agent starts on the task, and every later session works there too.
    """

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="worktree")
    repository = models.ForeignKey(Repository, on_delete=models.PROTECT, related_name="worktrees")
    base_branch = models.CharField(
        _("base branch"), max_length=200, blank=True, help_text=_("Empty: the repository's default branch.")
    )
    branch = models.CharField(_("branch"), max_length=250, blank=True)
    path = models.CharField(_("path"), max_length=1000, blank=True)
    #: The commit the branch started from: what "changed" is measured against.
    base_commit = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["repository", "branch"], condition=~models.Q(branch=""), name="unique_worktree_branch"
            ),
        ]

    def __str__(self):
        return self.branch or f"{self.repository} · {self.task}"

    @property
    def base(self) -> str:
        return self.base_branch or self.repository.default_branch


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
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TaskSessionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"{self.task} · {self.get_state_display()}"


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
