"""The git repositories a workspace's agents work on, and each task's worktree of one."""

from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from kandev_web import git
from kandev_web.agents.models import Executor, SealedTextField
from kandev_web.board.models import Task, Workspace


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
    #: Where "Push branch" sends a task's branch: a remote's name in the repository, or a URL.
    push_remote = models.CharField(
        _("push remote"),
        max_length=500,
        blank=True,
        help_text=_("A remote's name in the repository (origin) or its URL; empty: tasks' branches are not pushed."),
    )
    #: The HTTPS credential for ``push_remote``: a token, or ``user:token``. Write-only; never logged, never in argv.
    push_token = SealedTextField(
        _("push token"),
        blank=True,
        help_text=_("For an HTTPS remote: a token, or user:token. Kept encrypted; empty: none, or the machine's own."),
    )

    objects = RepositoryQuerySet.as_manager()

    class Meta:
        db_table = "agent_sessions_repository"  # made by the sessions app, before this one had its own
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
        db_table = "agent_sessions_worktree"  # made by the sessions app, before this one had its own
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


class ReviewComment(models.Model):
    """An operator's comment on a line of a task's branch, kept until it is sent to the agent (and after, as sent)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="review_comments")
    path = models.CharField(max_length=1000)
    #: The line in the file as the branch has it now (the diff's new side).
    line = models.PositiveIntegerField()
    text = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    #: When it went to the agent in a follow-up prompt; None while it waits to be sent.
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["path", "line", "pk"]

    def __str__(self):
        return f"{self.path}:{self.line}"
