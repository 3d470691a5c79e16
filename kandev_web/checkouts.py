"""A task's checkout, as the few coarse steps the web app asks of the machine that holds the repository.

A repository is on the web machine or on an executor host. Either way the
web app asks for the same steps, each a whole piece of work (make the
worktree, list a turn's changes with their texts, remove it): on the web
machine they run here, in-process; on an executor host, ``kandev-checkout``
runs them there over SSH (``docs/agent-stream.md``), so each is one
request however many git commands it takes. Arguments and results are JSON
values for that reason. No Django: what a failure means to a person is the
caller's to say (``git.GitError`` carries the kind).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from kandev_web import git


def free_branch(stem: str, taken: Callable[[str], bool]) -> str:
    for n in itertools.count(1):
        name = stem if n == 1 else f"{stem}-{n}"
        if not taken(name):
            return name
    raise AssertionError("unreachable")


def _free_dir(root: Path, task_id: int) -> Path:
    for n in itertools.count(1):
        path = root / (f"task-{task_id}" if n == 1 else f"task-{task_id}-{n}")
        if not path.exists():
            return path
    raise AssertionError("unreachable")


def _current_text(top: Path, relative: str, limit: int) -> str:
    """The file as it is in the worktree: a symlink as its target (git's view), never followed out of the tree."""
    path = top / relative
    if path.is_symlink():
        return os.readlink(path)
    if not path.is_file():
        return ""
    with path.open("rb") as handle:
        return handle.read(limit).decode("utf-8", errors="replace")


class Checkouts:
    """The task checkouts on one machine; each step is one ``perform`` there.

    ``LocalCheckouts`` performs them here; ``executor.ssh.SshCheckouts``
    runs each on the host that holds the repository.
    """

    def perform(self, operation: str, args: dict[str, Any]) -> Any:
        """The step's result, shaped as its operation says (JSON when it ran on another host): hence the casts below."""
        raise NotImplementedError

    def inspect(self, path: str, default_branch: str) -> dict[str, str]:
        """The repository ``path`` is in and the branch new work starts from; ``GitError`` when it is none."""
        return cast("dict[str, str]", self.perform("inspect", {"path": path, "default_branch": default_branch}))

    def commit_of(self, repo: str, ref: str) -> str:
        return cast(str, self.perform("commit_of", {"repo": repo, "ref": ref}))

    def make(self, repo: str, base: str, task_id: int, branch_stem: str, taken: list[str]) -> dict[str, str]:
        """A new worktree for the task: a branch from ``base`` (``-2``, ``-3``… when taken) in a free directory."""
        args = {"repo": repo, "base": base, "task_id": task_id, "branch_stem": branch_stem, "taken": taken}
        return cast("dict[str, str]", self.perform("make", args))

    def restore(self, repo: str, path: str, branch: str) -> None:
        """Check ``branch`` out at ``path`` again if its directory is gone (removed by hand, a wiped disk)."""
        self.perform("restore", {"repo": repo, "path": path, "branch": branch})

    def file_changes(
        self, repo: str, path: str, base_commit: str, max_files: int, max_file_bytes: int, max_total_bytes: int
    ) -> dict[str, Any]:
        """Each file the worktree changed against ``base_commit``: ``[path, kind, old text or None, new text]``.

        At most ``max_files`` files and ``max_total_bytes`` of text in all (an
        answer has to fit one frame); ``total`` says how many there were.
        """
        args = {
            "repo": repo,
            "path": path,
            "base_commit": base_commit,
            "max_files": max_files,
            "max_file_bytes": max_file_bytes,
            "max_total_bytes": max_total_bytes,
        }
        return cast("dict[str, Any]", self.perform("file_changes", args))

    def branch_changes(
        self, repo: str, path: str, base_commit: str, first: int, max_files: int, only: str, max_file_bytes: int
    ) -> dict[str, Any]:
        """A page of :meth:`file_changes` for the review: the changed files from the ``first``-th (in path order).

        ``only``, when given, keeps that one file (its "Show more"). Each file
        is bounded by ``max_file_bytes``, and a page by one frame's worth.
        """
        args = {
            "repo": repo,
            "path": path,
            "base_commit": base_commit,
            "first": first,
            "max_files": max_files,
            "only": only,
            "max_file_bytes": max_file_bytes,
        }
        return cast("dict[str, Any]", self.perform("branch_changes", args))

    def remote_url(self, repo: str, remote: str) -> str:
        """Where ``remote`` (a remote's name, or a URL) points, as the repository's git reads it."""
        return cast(str, self.perform("remote_url", {"repo": repo, "remote": remote}))

    def push(self, repo: str, remote: str, branch: str, token: str) -> str:
        """Push ``branch`` to ``remote`` with ``token`` (may be empty) as its HTTP credential; the commit pushed.

        On an executor host the token travels in the request on stdin, never in argv there.
        """
        return cast(str, self.perform("push", {"repo": repo, "remote": remote, "branch": branch, "token": token}))

    def unique_commits(self, repo: str, branch: str) -> list[str]:
        """The commits on ``branch`` that no other branch or remote holds; none when the branch is gone."""
        return cast("list[str]", self.perform("unique_commits", {"repo": repo, "branch": branch}))

    def remove(self, repo: str, path: str, branch: str) -> None:
        """Remove the worktree at ``path`` and ``branch``, uncommitted changes and all (the caller asked)."""
        self.perform("remove", {"repo": repo, "path": path, "branch": branch})


class LocalCheckouts(Checkouts):
    """Checkouts on this machine, each worktree in a directory of its own under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def perform(self, operation: str, args: dict[str, Any]) -> Any:
        return _STEPS[operation](self.root, **args)


def _inspect(root: Path, path: str, default_branch: str) -> dict[str, str]:
    top = git.toplevel(Path(path))
    branch = default_branch or git.default_branch(top)
    git.commit_of(top, branch)
    return {"path": str(top), "default_branch": branch}


def _commit_of(root: Path, repo: str, ref: str) -> str:
    return git.commit_of(Path(repo), ref)


def _make(root: Path, repo: str, base: str, task_id: int, branch_stem: str, taken: list[str]) -> dict[str, str]:
    repository = Path(repo)
    base_commit = git.commit_of(repository, base)
    root = root.resolve()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise git.GitError(git.Failure.DISK, str(error)) from None
    path = _free_dir(root, task_id)
    branch = free_branch(branch_stem, lambda name: name in taken or git.branch_exists(repository, name))
    git.add_worktree(repository, path, branch, base_commit)
    return {"branch": branch, "path": str(path), "base_commit": base_commit}


def _restore(root: Path, repo: str, path: str, branch: str) -> None:
    if Path(path, ".git").exists():
        return
    git.run(Path(repo), "worktree", "prune")
    git.add_worktree(Path(repo), Path(path), branch, None)


def _file_changes(
    root: Path, repo: str, path: str, base_commit: str, max_files: int, max_file_bytes: int, max_total_bytes: int
) -> dict[str, Any]:
    changes = git.changes(Path(path), base_commit)
    return {
        "files": _texts(repo, path, base_commit, changes[:max_files], max_file_bytes, max_total_bytes),
        "total": len(changes),
    }


#: A review page's texts in all: what fits one answer from an executor host.
REVIEW_PAGE_BYTES = 8 * 1024 * 1024


def _branch_changes(
    root: Path, repo: str, path: str, base_commit: str, first: int, max_files: int, only: str, max_file_bytes: int
) -> dict[str, Any]:
    changes = git.changes(Path(path), base_commit)
    chosen = [change for change in changes if change.path == only] if only else changes[first : first + max_files]
    files = _texts(repo, path, base_commit, chosen, max_file_bytes, REVIEW_PAGE_BYTES)
    return {"files": files, "total": len(changes)}


def _remote_url(root: Path, repo: str, remote: str) -> str:
    return git.remote_url(Path(repo), remote)


def _push(root: Path, repo: str, remote: str, branch: str, token: str) -> str:
    return git.push(Path(repo), remote, branch, token)


def _texts(
    repo: str, path: str, base_commit: str, changes: list[git.Change], max_file_bytes: int, max_total_bytes: int
) -> list[list[Any]]:
    """``[path, kind, old text or None, new text]`` for each change, until ``max_total_bytes`` of text in all."""
    top = Path(path)
    files: list[list[Any]] = []
    size = 0
    for change in changes:
        old = None
        if change.kind != "added":
            old = (git.text_at(Path(repo), base_commit, change.path) or "")[:max_file_bytes]
        new = "" if change.kind == "deleted" else _current_text(top, change.path, max_file_bytes)
        size += len((old or "").encode()) + len(new.encode())
        if files and size > max_total_bytes:
            break
        files.append([change.path, change.kind, old, new])
    return files


def _unique_commits(root: Path, repo: str, branch: str) -> list[str]:
    if not git.branch_exists(Path(repo), branch):
        return []
    return git.unique_commits(Path(repo), branch)


def _remove(root: Path, repo: str, path: str, branch: str) -> None:
    repository = Path(repo)
    if Path(path).exists():
        git.remove_worktree(repository, Path(path))
    else:
        git.run(repository, "worktree", "prune")
    if git.branch_exists(repository, branch):
        git.delete_branch(repository, branch)


_STEPS: dict[str, Callable[..., Any]] = {
    "inspect": _inspect,
    "commit_of": _commit_of,
    "make": _make,
    "restore": _restore,
    "file_changes": _file_changes,
    "branch_changes": _branch_changes,
    "remote_url": _remote_url,
    "push": _push,
    "unique_commits": _unique_commits,
    "remove": _remove,
}


#: What another machine may ask of a ``Checkouts``, and the types of its arguments.
OPERATIONS: dict[str, dict[str, type]] = {
    "inspect": {"path": str, "default_branch": str},
    "commit_of": {"repo": str, "ref": str},
    "make": {"repo": str, "base": str, "task_id": int, "branch_stem": str, "taken": list},
    "restore": {"repo": str, "path": str, "branch": str},
    "file_changes": {
        "repo": str,
        "path": str,
        "base_commit": str,
        "max_files": int,
        "max_file_bytes": int,
        "max_total_bytes": int,
    },
    "branch_changes": {
        "repo": str,
        "path": str,
        "base_commit": str,
        "first": int,
        "max_files": int,
        "only": str,
        "max_file_bytes": int,
    },
    "remote_url": {"repo": str, "remote": str},
    "push": {"repo": str, "remote": str, "branch": str, "token": str},
    "unique_commits": {"repo": str, "branch": str},
    "remove": {"repo": str, "path": str, "branch": str},
}


def problems(operation: object, args: object) -> list[str]:
    """Why a request for ``operation`` with ``args`` cannot be carried out; empty when it can."""
    if not isinstance(operation, str) or operation not in OPERATIONS:
        return [f"op must be one of {', '.join(OPERATIONS)}"]
    if not isinstance(args, dict):
        return ["args must be an object"]
    wanted = OPERATIONS[operation]
    found = [f"unexpected argument {name!r}" for name in args if name not in wanted]
    for name, kind in wanted.items():
        value = args.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            found.append(f"{name} must be {kind.__name__}")
        elif isinstance(value, str) and name in ("path", "repo") and not Path(value).is_absolute():
            found.append(f"{name} must be an absolute path")
    if (
        operation == "make"
        and isinstance(args.get("taken"), list)
        and not all(isinstance(name, str) for name in args["taken"])
    ):
        found.append("taken must be a list of strings")
    return found
