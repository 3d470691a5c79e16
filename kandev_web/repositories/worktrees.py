"""A task's git worktree: made when its first agent starts, reused by every later session, removed on request.

Two tasks never share a checkout: each gets a branch named after it
(``kandev/task-<id>-<slug>``, another suffix when taken) in a directory of
its own, under ``KANDEV_WORKTREE_ROOT`` or the worktree root of the executor
host that holds the repository (``hosts.checkouts``). Everything here
blocks on git or on that host, so it runs in a request's or a database
thread, never on the server's loop.
"""

from __future__ import annotations

from typing import TypeGuard

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from kandev_web import git
from kandev_web.agents.models import AgentProfile
from kandev_web.checkouts import Checkouts
from kandev_web.rendering.diff import FileDiff, file_diff

from . import hosts
from .models import Worktree

BRANCH_PREFIX = "kandev/"
#: How much of a task's title its branch carries.
SLUG_CHARS = 40
#: A turn's changes show at most this many files, and no file past this many bytes.
MAX_FILES = 100
MAX_FILE_BYTES = 512 * 1024
#: Nor more text in all than fits one answer from an executor host.
MAX_TOTAL_BYTES = 8 * 1024 * 1024
#: Nor more diff lines than this in all: a timeline entry, not a copy of the repository.
MAX_TOTAL_LINES = 10_000


class WorktreeError(Exception):
    """The worktree could not be made or removed; the message says why, for the operator."""


def branch_stem(task_id: int, title: str) -> str:
    """``kandev/task-<id>-<slug of title>``: the task's branch, unless the name is taken (then ``-2``, ``-3``…)."""
    slug = slugify(title)[:SLUG_CHARS].strip("-")
    return f"{BRANCH_PREFIX}task-{task_id}" + (f"-{slug}" if slug else "")


def sentence(error: git.GitError, worktree: Worktree) -> str:
    """What ``error`` means to the operator, about ``worktree`` and its repository."""
    repository = worktree.repository
    match error.failure:
        case git.Failure.NOT_A_REPOSITORY:
            return _("%(path)s is not a git repository any more.") % {"path": repository.path}
        case git.Failure.NO_SUCH_REF:
            return _("The repository has no branch %(branch)s to start from.") % {"branch": worktree.base}
        case git.Failure.BRANCH_IN_USE:
            return _("The branch %(branch)s is checked out in another worktree (%(detail)s).") % {
                "branch": worktree.branch,
                "detail": error.detail,
            }
        case git.Failure.PATH_EXISTS:
            return _("Something is in the way of the worktree: %(detail)s.") % {"detail": error.detail}
        case git.Failure.DISK:
            return _("The worktree could not be written to disk: %(detail)s.") % {"detail": error.detail}
        case git.Failure.GIT_MISSING:
            return _("git is not installed on the machine that holds %(repository)s.") % {"repository": repository}
        case git.Failure.UNREACHABLE:
            return _("%(executor)s, which holds %(repository)s, could not be reached: %(detail)s.") % {
                "executor": repository.executor,
                "repository": repository,
                "detail": error.detail,
            }
    return _("git failed: %(detail)s.") % {"detail": error.detail}


def _check_machine(worktree: Worktree, profile: AgentProfile) -> None:
    """An agent works in its task's worktree only on the machine that holds the repository."""
    repository = worktree.repository
    if repository.executor_id == profile.executor_id:
        return
    raise WorktreeError(
        _("%(repository)s is on %(machine)s, but %(profile)s runs its agents on %(agents)s.")
        % {
            "repository": repository,
            "machine": repository.executor or _("the web machine"),
            "profile": profile,
            "agents": profile.executor or _("the web machine"),
        }
    )


def ensure_worktree(task_id: int, profile: AgentProfile) -> Worktree | None:
    """The task's worktree, made now if it has none yet; None when the task names no repository.

    The row is locked while git works, so two agents started at once on one
    task end up in the same worktree, and never in two.
    """
    with transaction.atomic():
        worktree = (
            Worktree.objects.select_for_update(of=("self",))
            .select_related("repository__executor", "task")
            .filter(task_id=task_id)
            .first()
        )
        if worktree is None:
            return None
        _check_machine(worktree, profile)
        checkouts = hosts.checkouts(worktree.repository)
        try:
            if worktree.branch:
                checkouts.restore(worktree.repository.path, worktree.path, worktree.branch)
                return worktree
            _make(worktree, checkouts)
        except git.GitError as error:
            raise WorktreeError(sentence(error, worktree)) from None
        except OSError as error:
            raise WorktreeError(_("The worktree could not be written to disk: %(error)s.") % {"error": error}) from None
        worktree.save(update_fields=["branch", "path", "base_commit", "created_at"])
        return worktree


def _make(worktree: Worktree, checkouts: Checkouts) -> None:
    taken_here = Worktree.objects.filter(repository=worktree.repository).exclude(branch="")
    made = checkouts.make(
        worktree.repository.path,
        worktree.base,
        worktree.task_id,
        branch_stem(worktree.task_id, worktree.task.title),
        list(taken_here.values_list("branch", flat=True)),
    )
    worktree.branch, worktree.path, worktree.base_commit = made["branch"], made["path"], made["base_commit"]
    worktree.created_at = timezone.now()


def changed_files(worktree: Worktree) -> tuple[list[FileDiff], int]:
    """Each file the task's worktree has changed against its base, as a diff, and how many more were left out."""
    found = hosts.checkouts(worktree.repository).file_changes(
        worktree.repository.path, worktree.path, worktree.base_commit, MAX_FILES, MAX_FILE_BYTES, MAX_TOTAL_BYTES
    )
    diffs: list[FileDiff] = []
    lines = 0
    for path, _kind, old, new in found["files"]:
        if lines >= MAX_TOTAL_LINES:
            break
        diffs.append(file_diff(path, old, new))
        lines += len(diffs[-1]["lines"])
    return diffs, found["total"] - len(diffs)


def made(worktree: Worktree | None) -> TypeGuard[Worktree]:
    return worktree is not None and bool(worktree.path)


def unique_commits(worktree: Worktree) -> list[str]:
    """The commits on the task's branch that no other branch or remote holds."""
    try:
        return hosts.checkouts(worktree.repository).unique_commits(worktree.repository.path, worktree.branch)
    except git.GitError as error:
        raise WorktreeError(sentence(error, worktree)) from None


class UnmergedCommits(WorktreeError):
    """Removing the branch would lose commits; the operator has to say so."""

    def __init__(self, worktree: Worktree, commits: list[str]) -> None:
        super().__init__(
            _(
                "The branch %(branch)s holds %(count)d commit(s) that exist nowhere else; "
                "confirm that they may be discarded to remove it."
            )
            % {"branch": worktree.branch, "count": len(commits)}
        )
        self.commits = commits


def remove(worktree: Worktree, *, discard_commits: bool = False) -> None:
    """Remove the task's worktree and its branch; refused (``UnmergedCommits``) when that would lose commits."""
    if not made(worktree):
        return
    commits = unique_commits(worktree)
    if commits and not discard_commits:
        raise UnmergedCommits(worktree, commits)
    try:
        hosts.checkouts(worktree.repository).remove(worktree.repository.path, worktree.path, worktree.branch)
    except git.GitError as error:
        raise WorktreeError(sentence(error, worktree)) from None
