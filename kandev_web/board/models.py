from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from kandev_web import limits

DEFAULT_STEPS = [
    # (name, colour, is_start) — Kandev's "simple" template.
    (_("Backlog"), "slate", False),
    (_("In Progress"), "blue", True),
    (_("Review"), "amber", False),
    (_("Done"), "green", False),
]


class WorkspaceQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(members=user)

    def administered_by(self, user):
        """The workspaces whose settings ``user`` manages: those they are an admin of; a superuser, all they are in."""
        if user.is_superuser:
            return self.for_user(user)
        return self.filter(memberships__user=user, memberships__role=Role.ADMIN)


class Workspace(models.Model):
    """The unit of access: an operator sees a workspace's boards only as a member.

    Every model an operator reaches has ``objects.for_user(user)``, this rule
    followed from that model to its workspace; views and consumers read
    through it instead of spelling the path out.
    """

    name = models.CharField(_("name"), max_length=200)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="workspaces", blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self):
        return self.name


class Role(models.TextChoices):
    """What a member may do in a workspace; nothing here reaches another workspace or the deployment's settings."""

    #: Works on its boards and tasks, answers its agents.
    MEMBER = "member", _("Member")
    #: A member who also manages its agent profiles, repositories and webhooks.
    ADMIN = "admin", _("Admin")


class Membership(models.Model):
    """An operator's place in a workspace, and their role there.

    The table is the one the plain many-to-many field made (hence its name):
    the role was added to it in place, its rows kept.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(_("role"), max_length=16, choices=Role, default=Role.MEMBER)

    class Meta:
        db_table = "board_workspace_members"
        unique_together = [("workspace", "user")]
        verbose_name = _("membership")

    def __str__(self):
        return f"{self.user} · {self.workspace} ({self.get_role_display()})"


class BoardQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(workspace__members=user)


class Board(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="boards")
    name = models.CharField(_("name"), max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = BoardQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self):
        return self.name

    def add_default_steps(self):
        Step.objects.bulk_create(
            Step(board=self, name=str(name), color=color, position=i, is_start=is_start)
            for i, (name, color, is_start) in enumerate(DEFAULT_STEPS)
        )


class Step(models.Model):
    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="steps")
    name = models.CharField(_("name"), max_length=100)
    color = models.CharField(_("colour"), max_length=20, default="slate")
    position = models.PositiveIntegerField(_("position"))
    is_start = models.BooleanField(
        _("start step"), default=False, help_text=_("Where a task goes when an agent starts on it.")
    )

    class Meta:
        ordering = ["position", "pk"]
        constraints = [models.UniqueConstraint(fields=["board", "position"], name="unique_step_position")]

    def __str__(self):
        return self.name


class TaskState(models.TextChoices):
    TODO = "TODO", _("To do")
    CREATED = "CREATED", _("Created")
    SCHEDULING = "SCHEDULING", _("Scheduling")
    IN_PROGRESS = "IN_PROGRESS", _("In progress")
    REVIEW = "REVIEW", _("Review")
    BLOCKED = "BLOCKED", _("Blocked")
    WAITING_FOR_INPUT = "WAITING_FOR_INPUT", _("Waiting for input")
    COMPLETED = "COMPLETED", _("Completed")
    FAILED = "FAILED", _("Failed")
    CANCELLED = "CANCELLED", _("Cancelled")


class TaskQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(board__workspace__members=user)


class Task(models.Model):
    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="tasks")
    step = models.ForeignKey(Step, on_delete=models.PROTECT, related_name="tasks")
    title = models.CharField(_("title"), max_length=limits.TASK_TITLE_CHARS)
    # max_length on a TextField binds every form (the board's, the admin's), not the column.
    description = models.TextField(_("description"), blank=True, max_length=limits.TASK_DESCRIPTION_CHARS)
    position = models.PositiveIntegerField(_("position"), default=0)
    state = models.CharField(_("state"), max_length=32, choices=TaskState, default=TaskState.TODO)
    #: What the operator means the task's agents to spend, in the currency they report their cost in: crossing it
    #: warns (task page, card, inbox) and never stops an agent.
    budget = models.DecimalField(
        _("budget"), max_digits=12, decimal_places=2, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TaskQuerySet.as_manager()

    class Meta:
        ordering = ["step__position", "position", "pk"]
        indexes = [models.Index(fields=["board", "step", "position"])]

    def __str__(self):
        return self.title

    @property
    def sort_key(self) -> str:
        """Its place in its column, as pages compare it (``data-sort-key``): position, then id."""
        return f"{self.position},{self.pk}"
