"""Reviewing a task's branch and shipping it: its whole diff, comments on its lines, the push, the forge's link.

The branch's diff is read where the repository is, like a turn's changes
(``hosts.checkouts``): on the web machine, or on its executor host over
SSH. It is everything the worktree has against the commit the branch
started from, committed or not, untracked files as added; a page holds at
most ``FILES_PER_PAGE`` files and shows ``LINES_PER_WINDOW`` lines of each at
a time. Everything here blocks on git or on that host: call it from a
request's thread.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from kandev_web import forges, git
from kandev_web.rendering.diff import (
    FileDiff,
    NumberedLine,
    file_diff,
    highlighted,
    numbered,
    page_bounds,
    window,
)

from . import hosts
from .models import ReviewComment, Worktree
from .worktrees import MAX_FILE_BYTES, sentence

#: Files on one review page.
FILES_PER_PAGE = 20
#: A file's lines shown at a time; "Show more" brings the next as many.
LINES_PER_WINDOW = 400


class ReviewError(Exception):
    """The branch could not be read or pushed; the message says why, for the operator."""


@dataclass
class ReviewLine:
    kind: str
    old: int | None
    new: int | None
    #: The line's text as HTML: escaped, its tokens in Pygments' spans.
    html: str


@dataclass
class ReviewFile:
    path: str
    kind: str
    old_path: str
    lines: list[ReviewLine]
    #: Where the next window of lines starts; None when these are the last.
    more_from: int | None
    #: Lines past the diff's own bound (``rendering.diff.MAX_LINES``), never shown.
    omitted: int
    added: int
    deleted: int


@dataclass
class ReviewPage:
    files: list[ReviewFile]
    #: Files the branch changed in all, and the page of them this is.
    total: int
    page: int
    pages: int


def _lines(diff: FileDiff, rows: list[NumberedLine]) -> list[ReviewLine]:
    """The rows with their HTML: the new side's lines highlighted together, a removed line and a hunk escaped.

    A removed line keeps the diff's own colours: the code's would be read
    against red, and the new side is what is being reviewed.
    """
    new_side = [index for index, row in enumerate(rows) if row["kind"] in ("add", "ctx")]
    colored = dict(zip(new_side, highlighted(diff["path"], [rows[i]["text"] for i in new_side]), strict=True))
    return [
        ReviewLine(row["kind"], row["old"], row["new"], colored.get(index) or html.escape(row["text"]))
        for index, row in enumerate(rows)
    ]


def _review_file(path: str, kind: str, old: str | None, new: str, start: int) -> ReviewFile:
    diff = file_diff(path, old, new)
    rows = numbered(diff["lines"])
    shown, more_from = window(rows, start, LINES_PER_WINDOW)
    return ReviewFile(
        path=path,
        kind=kind,
        old_path=diff["old_path"],
        lines=_lines(diff, shown),
        more_from=more_from,
        omitted=diff["omitted"],
        added=sum(row["kind"] == "add" for row in rows),
        deleted=sum(row["kind"] == "del" for row in rows),
    )


def _changes(worktree: Worktree, first: int, only: str) -> dict:
    try:
        return hosts.checkouts(worktree.repository).branch_changes(
            worktree.repository.path, worktree.path, worktree.base_commit, first, FILES_PER_PAGE, only, MAX_FILE_BYTES
        )
    except git.GitError as error:
        raise ReviewError(sentence(error, worktree)) from None


def review_page(worktree: Worktree, page: int) -> ReviewPage:
    """The ``page``-th page (1-based) of the files the task's branch changed, each file's first window of lines.

    Asked for a page past the last, the last is shown: a page's files can
    shrink between two looks (the agent reverted one).
    """
    asked = max(page, 1)
    found = _changes(worktree, (asked - 1) * FILES_PER_PAGE, "")
    page, pages = page_bounds(found["total"], FILES_PER_PAGE, asked)
    if page != asked:
        found = _changes(worktree, (page - 1) * FILES_PER_PAGE, "")
    files = [_review_file(path, kind, old, new, 0) for path, kind, old, new in found["files"]]
    return ReviewPage(files=files, total=found["total"], page=page, pages=pages)


def file_window(worktree: Worktree, path: str, start: int) -> ReviewFile | None:
    """The lines of ``path``'s diff from ``start`` (its "Show more"); None when the branch no longer changes it."""
    found = _changes(worktree, 0, path)
    for changed, kind, old, new in found["files"]:
        if changed == path:
            return _review_file(path, kind, old, new, start)
    return None


# Comments


def add_comment(worktree: Worktree, user, path: str, line: int, text: str) -> ReviewComment:
    return ReviewComment.objects.create(task_id=worktree.task_id, path=path, line=line, text=text, author=user)


def compose_prompt(branch: str, comments: Iterable[tuple[str, int, str]]) -> str:
    """The one follow-up prompt that carries the operator's comments: ``path:line — text`` a line each, in order.

    A comment of several lines keeps them, indented under its own item, so
    that no line of one can pass for another comment.
    """
    items = []
    for path, line, text in comments:
        body = "\n  ".join(part.rstrip() for part in text.strip().splitlines())
        items.append(f"- {path}:{line} — {body}")
    return _("Review comments on %(branch)s:") % {"branch": branch} + "\n" + "\n".join(items)


def unsent(task_id: int) -> list[ReviewComment]:
    return list(ReviewComment.objects.filter(task_id=task_id, sent_at__isnull=True))


def send_comments(worktree: Worktree, deliver) -> int:
    """Send every unsent comment in one prompt through ``deliver(prompt)``; how many went.

    ``deliver`` raises when the agent cannot take the prompt; the comments
    then stay unsent, to be sent again. Marked sent only once delivered, and
    only those that were in the prompt (one added meanwhile waits for the next).
    """
    comments = unsent(worktree.task_id)
    if not comments:
        return 0
    deliver(compose_prompt(worktree.branch, [(c.path, c.line, c.text) for c in comments]))
    with transaction.atomic():
        ReviewComment.objects.filter(pk__in=[c.pk for c in comments], sent_at__isnull=True).update(
            sent_at=timezone.now()
        )
    return len(comments)


# Shipping


def pull_request_url(worktree: Worktree) -> str | None:
    """The forge's "new pull request" page for the task's branch against its base; None when the forge is unknown.

    Read off the push remote's URL (the remote's name asked of the repository).
    """
    remote = worktree.repository.push_remote
    if not remote or not worktree.branch:
        return None
    if forges.web_repository(remote) is None:
        try:
            remote = hosts.checkouts(worktree.repository).remote_url(worktree.repository.path, remote)
        except git.GitError:
            return None
    return forges.pull_request_url(remote, worktree.branch, worktree.base)


def push(worktree: Worktree) -> str:
    """Push the task's branch to the repository's push remote; the commit pushed (``ReviewError`` says why not)."""
    repository = worktree.repository
    if not repository.push_remote:
        raise ReviewError(
            _("%(repository)s has no push remote: set one on the workspace's Repositories page.")
            % {"repository": repository}
        )
    try:
        return hosts.checkouts(repository).push(
            repository.path, repository.push_remote, worktree.branch, repository.push_token
        )
    except git.GitError as error:
        raise ReviewError(_push_sentence(error, worktree)) from None


def _push_sentence(error: git.GitError, worktree: Worktree) -> str:
    remote = worktree.repository.push_remote
    match error.failure:
        case git.Failure.REJECTED:
            return _(
                "%(remote)s refused %(branch)s: its branch there has commits this one lacks, "
                "or it is protected (%(detail)s)."
            ) % {"remote": remote, "branch": worktree.branch, "detail": error.detail}
        case git.Failure.AUTHENTICATION:
            return _(
                "%(remote)s refused the credentials: set a push token on the Repositories page, "
                "or give the machine a key (%(detail)s)."
            ) % {"remote": remote, "detail": error.detail}
        case git.Failure.NO_REMOTE:
            return _("%(remote)s could not be reached as a git remote: %(detail)s.") % {
                "remote": remote,
                "detail": error.detail,
            }
        case git.Failure.NO_SUCH_REF:
            return _("The branch %(branch)s is not in the repository any more.") % {"branch": worktree.branch}
    return sentence(error, worktree)
