from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from kandev_web.sessions.models import AgentExecution, TaskSession, Turn


class Source(models.TextChoices):
    ASK_USER_QUESTION = "ask_user_question", _("ask_user_question_kandev tool")
    ELICITATION = "elicitation", _("ACP elicitation")


class Mode(models.TextChoices):
    """What the agent asks for: answers to a form, or that the operator open a page (an MCP server's sign-in)."""

    FORM = "form", _("form")
    URL = "url", _("a page to open")


class Status(models.TextChoices):
    PENDING = "pending", _("Waiting for an answer")
    ANSWERED = "answered", _("Answered")
    REJECTED = "rejected", _("Skipped")
    EXPIRED = "expired", _("Timed out")
    CANCELLED = "cancelled", _("Cancelled")


class Surface(models.TextChoices):
    """Where an operator's answer came from."""

    TASK_PAGE = "task_page", _("the task page (its live connection)")
    INBOX = "inbox", _("the inbox (its live connection)")
    BOARD = "board", _("the board (its live connection)")
    FORM = "form", _("the HTML form, without JavaScript")
    API = "api", _("the HTTP API")


class ClarificationQuerySet(models.QuerySet):
    def for_user(self, user):
        """The questions of the workspaces ``user`` is a member of."""
        return self.filter(session__task__board__workspace__members=user)


class Clarification(models.Model):
    """A bundle of questions an agent is waiting on, answerable from any web process.

    An ``ask_user_question_kandev`` bundle is identified by its questions (and
    so deduplicated); an elicitation-backed one by agentctl's ``pending_id``.
    """

    pending_id = models.CharField(max_length=64, unique=True)
    session = models.ForeignKey(TaskSession, on_delete=models.CASCADE, related_name="clarifications")
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    execution = models.ForeignKey(
        AgentExecution, null=True, blank=True, on_delete=models.SET_NULL, related_name="clarifications"
    )
    source = models.CharField(max_length=32, choices=Source, default=Source.ASK_USER_QUESTION)
    questions = models.JSONField()
    context = models.TextField(blank=True)
    #: Elicitations: the form schema's own title and description, shown above its questions.
    form_title = models.TextField(blank=True)
    form_description = models.TextField(blank=True)
    #: Elicitations: ``url`` for a page the agent asks the operator to open (``docs/decisions/url-mode.md``),
    #: with its address as agentctl let it through (https, or http to loopback in development) and the
    #: agent's id for it; ``completed_at`` is when the agent said the page had done its work.
    mode = models.CharField(max_length=8, choices=Mode, default=Mode.FORM)
    url = models.TextField(blank=True)
    elicitation_id = models.CharField(max_length=256, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    #: Elicitations: ``async`` when the agent goes on without waiting for the answer
    #: (``elicitation.requested``'s ``delivery``); empty when it waits, as it usually does.
    delivery = models.CharField(max_length=16, blank=True)
    #: For deduplication: the questions' prompts and options, normalised (ask path only).
    dedup_key = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status, default=Status.PENDING)
    response = models.JSONField(null=True, blank=True)
    agent_disconnected = models.BooleanField(default=False)
    #: Elicitations: the tool call that asked (empty when an MCP server asked
    #: through the agent), and why agentctl settled it.
    tool_call_id = models.CharField(max_length=200, blank=True)
    #: Why it ended (agentctl's reasons, plus ``undelivered``), and when.
    settled_reason = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    responded_at = models.DateTimeField(null=True, blank=True)
    #: The audit trail of an operator's answer or Skip: who, through which
    #: surface, and for the task page which of its open pages (an opaque id of
    #: that page's live connection), so every tab can tell "this tab" from
    #: "another tab".
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered_via = models.CharField(max_length=16, choices=Surface, blank=True)
    answered_from = models.CharField(max_length=64, blank=True)

    objects = ClarificationQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["session", "status"])]

    def __str__(self):
        return self.pending_id


class Attempt(models.Model):
    """An operator's answer to an elicitation, as the answering process recorded it before forwarding it.

    Not a settlement: agentctl alone decides which of several racing answers
    counts, and echoes the winner's ``ref`` in ``elicitation.settled``; the
    process owning the stream then settles the question from the winning
    attempt, once (``actions.do_settle_elicitation``). Who answered, from
    where, and what they chose (as it may be stored: ``redaction``) come from
    here; what went on the wire, from agentctl.
    """

    ref = models.CharField(max_length=64, unique=True)
    clarification = models.ForeignKey(Clarification, on_delete=models.CASCADE, related_name="attempts")
    #: What ``Clarification.response`` keeps of the operator's side: ``rejected``, ``answers``.
    response = models.JSONField()
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered_via = models.CharField(max_length=16, choices=Surface, blank=True)
    answered_from = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    #: What agentctl reported when it took this answer (``content``, ``withheld``, as they may be
    #: stored); null until it did. Written by the answering process from agentctl's response, so an
    #: owner whose stream was down when the settlement went out still settles from it on reconnect
    #: (``actions.do_settle_gone``).
    accepted = models.JSONField(null=True, blank=True)

    def __str__(self):
        return self.ref
