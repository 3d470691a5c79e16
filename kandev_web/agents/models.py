"""Agent profiles and the executor hosts they run on, with the sealed field their credentials are kept in."""

import functools
import logging
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from kandev_web.board.models import Workspace
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


def reseal(model: type[models.Model], field: str) -> tuple[int, list[str]]:
    """Seal ``model``'s ``field`` (a ``SealedTextField``) again with the first key: how many, and those no key opens.

    Read opened with whichever key sealed it, saved sealed with the first; a
    stored value that reads as empty is one no configured key opens.
    """
    rotated, unreadable = 0, []
    for row in model._default_manager.exclude(**{field: ""}).iterator():
        if getattr(row, field):
            row.save(update_fields=[field])
            rotated += 1
        else:
            unreadable.append(f"{model.__name__} {row.pk}: {field}")
    return rotated, unreadable


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
    #: A host is the deployment's (its superusers register it); these workspaces' admins may put
    #: their agent profiles and repositories on it, and no others.
    workspaces = models.ManyToManyField(
        Workspace,
        related_name="executors",
        blank=True,
        verbose_name=_("workspaces"),
        help_text=_("Whose agent profiles and repositories may run on it."),
    )

    class Meta:
        db_table = "agent_sessions_executor"  # made by the sessions app, before this one had its own
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


#: The secret (a JSON object of header names to values) sent as the model gateway's headers
#: (``agentctl.auth.GATEWAY_HEADERS_VAR``): stored, sealed and shown like every other secret.
GATEWAY_HEADERS_SECRET = "KANDEV_GATEWAY_HEADERS"  # noqa: S105 - the secret's name, not a secret


def validate_gateway_url(value):
    """A model gateway is reached over http or https, with a host."""
    parsed = urlsplit(value)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValidationError(
            _("Give the gateway's base URL with http:// or https://, e.g. https://llm.example.com/v1.")
        )


def validate_config_options(value):
    """``{option id: value}``, both strings: ACP ``session/set_config_option`` takes a string value."""
    if not isinstance(value, dict) or not all(
        isinstance(key, str) and key.strip() and isinstance(setting, str) for key, setting in value.items()
    ):
        raise ValidationError(_("Config options are an object of option ids to string values."))


class AgentProfile(models.Model):
    """How to start one kind of ACP agent: the command agentctl runs over stdio.

    ``env`` is shown and edited in clear; ``secret_env`` (API keys, tokens) is
    write-only: each value sealed (``kandev_web/secret_box.py``), its name
    readable, its value opened only when an agent is launched
    (``sessions.launching``). Nothing renders, logs or ``repr``s a value.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="agent_profiles")
    name = models.CharField(_("name"), max_length=200)
    agent_id = models.CharField(_("agent id"), max_length=100, help_text=_("The agent's registry id, e.g. claude-acp."))
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
    gateway_base_url = models.CharField(
        _("model gateway URL"),
        max_length=500,
        blank=True,
        validators=[validate_gateway_url],
        help_text=_(
            "For agents that sign in through a model gateway (Codex): the base URL of an OpenAI-compatible "
            "Responses API, e.g. https://llm.example.com/v1. Its headers (a JSON object) go under Secrets as "
            "KANDEV_GATEWAY_HEADERS."
        ),
    )
    config_options = models.JSONField(
        _("config options at session start"),
        default=dict,
        blank=True,
        validators=[validate_config_options],
        help_text=_("ACP session config options set when a session starts, e.g. collaboration_mode=plan for Codex."),
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
        db_table = "agent_sessions_agentprofile"  # made by the sessions app, before this one had its own
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
