"""A task's git worktree: made when its first agent starts, reused by every later session, removed on request.

Two tasks never share a checkout: each gets a branch named after it
(``kandev/task-<id>-<slug>``, another suffix when taken) in a directory of
its own under ``KANDEV_WORKTREE_ROOT``. Everything here blocks on git, so it
runs in a request's or a database thread, never on the server's loop.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from kandev_web import git
from kandev_web.rendering.diff import FileDiff, file_diff

from .models import AgentProfile, Worktree

BRANCH_PREFIX = "kandev/"
#: How much of a task's title its branch carries.
SLUG_CHARS = 40
#: A turn's changes show at most this many files, and no file past this many bytes.
MAX_FILES = 100
MAX_FILE_BYTES = 512 * 1024
#: Nor more diff lines than this in all: a timeline entry, not a copy of the repository.
MAX_TOTAL_LINES = 10_000


class WorktreeError(Exception):
    """The worktree could not be made or removed; the message says why, for the operator."""


def branch_name(task_id: int, title: str, taken: Callable[[str], bool]) -> str:
    """``kandev/task-<id>-<slug of title>``, or with ``-2``, ``-3``… when ``taken`` says a name is."""
    slug = slugify(title)[:SLUG_CHARS].strip("-")
    stem = f"{BRANCH_PREFIX}task-{task_id}" + (f"-{slug}" if slug else "")
    for n in itertools.count(1):
        name = stem if n == 1 else f"{stem}-{n}"
        if not taken(name):
            return name
    raise AssertionError("unreachable")


def worktree_dir(root: Path, task_id: int, taken: Callable[[Path], bool]) -> Path:
    """A directory of its own under ``root`` for the task's worktree."""
    for n in itertools.count(1):
        path = root / (f"task-{task_id}" if n == 1 else f"task-{task_id}-{n}")
        if not taken(path):
            return path
    raise AssertionError("unreachable")


def _sentence(error: git.GitError, worktree: Worktree) -> str:
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
            return _("git is not installed on this machine.")
    return _("git failed: %(detail)s.") % {"detail": error.detail}


def _check_machine(worktree: Worktree, profile: AgentProfile) -> None:
    repository = worktree.repository
    if repository.executor_id is not None:
        raise WorktreeError(
            _("%(repository)s is on %(executor)s; worktrees are only made on the web machine so far.")
            % {"repository": repository, "executor": repository.executor}
        )
    if profile.executor_id is not None:
        raise WorktreeError(
            _("%(repository)s is on the web machine, but %(profile)s runs its agents on %(executor)s.")
            % {"repository": repository, "profile": profile, "executor": profile.executor}
        )


def ensure_worktree(task_id: int, profile: AgentProfile) -> Worktree | None:
    """The task's worktree, made now if it has none yet; None when the task names no repository.

    The row is locked while git works, so two agents started at once on one
    task end up in the same worktree, and never in two.
    """
    with transaction.atomic():
        worktree = (
            Worktree.objects.select_for_update(of=("self",))
            .select_related("repository__executor")
            .filter(task_id=task_id)
            .first()
        )
        if worktree is None:
            return None
        _check_machine(worktree, profile)
        repo = Path(worktree.repository.path)
        try:
            if worktree.path and Path(worktree.path, ".git").exists():
                return worktree
            if worktree.branch:
                # Its directory is gone (removed by hand, or a disk was wiped): check the branch out again.
                git.run(repo, "worktree", "prune")
                git.add_worktree(repo, Path(worktree.path), worktree.branch, None)
                return worktree
            _make(worktree, repo)
        except git.GitError as error:
            raise WorktreeError(_sentence(error, worktree)) from None
        except OSError as error:
            raise WorktreeError(_("The worktree could not be written to disk: %(error)s.") % {"error": error}) from None
        worktree.save(update_fields=["branch", "path", "base_commit", "created_at"])
        return worktree


def _make(worktree: Worktree, repo: Path) -> None:
    base_commit = git.commit_of(repo, worktree.base)
    root = Path(settings.KANDEV_WORKTREE_ROOT).resolve()
    root.mkdir(parents=True, exist_ok=True)
    path = worktree_dir(root, worktree.task_id, lambda p: p.exists())
    taken_here = set(Worktree.objects.filter(repository=worktree.repository).values_list("branch", flat=True))
    worktree.branch = branch_name(
        worktree.task_id, worktree.task.title, lambda name: name in taken_here or git.branch_exists(repo, name)
    )
    git.add_worktree(repo, path, worktree.branch, base_commit)
    worktree.path, worktree.base_commit, worktree.created_at = str(path), base_commit, timezone.now()


def _current_text(top: Path, relative: str) -> str:
    """The file as it is in the worktree: a symlink as its target (git's view), never followed out of the tree."""
    path = top / relative
    if path.is_symlink():
        return os.readlink(path)
    if not path.is_file():
        return ""
    with path.open("rb") as handle:
        return handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")


def changed_files(worktree: Worktree) -> tuple[list[FileDiff], int]:
    """Each file the task's worktree has changed against its base, as a diff, and how many more were left out."""
    top = Path(worktree.path)
    repo = Path(worktree.repository.path)
    changes = git.changes(top, worktree.base_commit)
    diffs: list[FileDiff] = []
    lines = 0
    for change in changes[:MAX_FILES]:
        if lines >= MAX_TOTAL_LINES:
            break
        old = None
        if change.kind != "added":
            old = (git.text_at(repo, worktree.base_commit, change.path) or "")[:MAX_FILE_BYTES]
        new = "" if change.kind == "deleted" else _current_text(top, change.path)
        diffs.append(file_diff(change.path, old, new))
        lines += len(diffs[-1]["lines"])
    return diffs, len(changes) - len(diffs)


def made(worktree: Worktree | None) -> bool:
    return worktree is not None and bool(worktree.path)


def unique_commits(worktree: Worktree) -> list[str]:
    """The commits on the task's branch that no other branch or remote holds."""
    try:
        return git.unique_commits(Path(worktree.repository.path), worktree.branch)
    except git.GitError as error:
        raise WorktreeError(_sentence(error, worktree)) from None


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
    repo = Path(worktree.repository.path)
    commits = unique_commits(worktree) if git.branch_exists(repo, worktree.branch) else []
    if commits and not discard_commits:
        raise UnmergedCommits(worktree, commits)
    try:
        if Path(worktree.path).exists():
            git.remove_worktree(repo, Path(worktree.path))
        else:
            git.run(repo, "worktree", "prune")
        if git.branch_exists(repo, worktree.branch):
            git.delete_branch(repo, worktree.branch)
    except git.GitError as error:
        raise WorktreeError(_sentence(error, worktree)) from None
