"""The few git operations Kandev needs for a worktree per task, over ``git`` itself.

Each call runs one ``git`` command as an argv list (never a shell string),
with ``-C`` naming the repository, and raises :class:`GitError` with a
:class:`Failure` kind the caller turns into a sentence for the operator. No
Django here: the callers decide what a failure means to a person, and run
these off the event loop (they block for as long as git takes).
"""

from __future__ import annotations

import base64
import enum
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

#: git must never stop to ask (a credential helper, an editor, a pager).
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", "GIT_PAGER": "cat", "LC_ALL": "C"}
TIMEOUT = 60.0

ChangeKind = Literal["added", "modified", "deleted"]
# git diff --name-status's letters; any other (M, T) is a modification.
_STATUS_KINDS: dict[str, ChangeKind] = {"A": "added", "D": "deleted"}


class Failure(enum.Enum):
    NOT_A_REPOSITORY = "not_a_repository"
    NO_SUCH_REF = "no_such_ref"
    BRANCH_IN_USE = "branch_in_use"
    PATH_EXISTS = "path_exists"
    DISK = "disk"
    GIT_MISSING = "git_missing"
    #: The executor host that holds the repository could not be asked.
    UNREACHABLE = "unreachable"
    #: A push: the remote would not take the branch as it is (not a fast-forward, a protected branch, a hook).
    REJECTED = "rejected"
    #: A push: the remote wants credentials it was not given, or refused the ones it was.
    AUTHENTICATION = "authentication"
    #: A push: the remote is not there (no such remote, host or repository).
    NO_REMOTE = "no_remote"
    OTHER = "other"


class GitError(Exception):
    """A git command failed; ``detail`` is git's own last line (paths, not secrets)."""

    def __init__(self, failure: Failure, detail: str = "") -> None:
        super().__init__(f"{failure.value}: {detail}")
        self.failure = failure
        self.detail = detail


_AUTHENTICATION = (
    "authentication failed",
    "could not read username",
    "could not read password",
    "permission denied (publickey",
    "invalid username or password",
    "http basic: access denied",
    "the requested url returned error: 401",
    "the requested url returned error: 403",
)
_NO_REMOTE = (
    "does not appear to be a git repository",
    "could not resolve host",
    "repository not found",
    "could not read from remote repository",
    "unable to access",
    "connection refused",
)


@dataclass(frozen=True)
class Change:
    path: str
    kind: ChangeKind


def _classify(stderr: str) -> Failure:
    text = stderr.lower()
    # A push's failures first: "permission denied (publickey)" is the remote's refusal, not the disk's.
    if any(sign in text for sign in _AUTHENTICATION):
        return Failure.AUTHENTICATION
    if "[rejected]" in text or "[remote rejected]" in text or "failed to push some refs" in text:
        return Failure.REJECTED
    if any(sign in text for sign in _NO_REMOTE):
        return Failure.NO_REMOTE
    if "not a git repository" in text or "cannot change to" in text:
        return Failure.NOT_A_REPOSITORY
    if "is already checked out at" in text or "is already used by worktree" in text:
        return Failure.BRANCH_IN_USE
    if "already exists" in text:
        return Failure.PATH_EXISTS
    if "invalid reference" in text or "unknown revision" in text or "not a valid object name" in text:
        return Failure.NO_SUCH_REF
    if "no space left" in text or "permission denied" in text or "read-only file system" in text:
        return Failure.DISK
    return Failure.OTHER


def run(
    repo: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``git -C repo args...``; a non-zero exit raises :class:`GitError` unless ``check`` is false.

    ``env`` adds to git's environment: where a credential goes, as argv is
    public on the machine (``ps``) and this module logs nothing.
    """
    argv = ["git", "-C", str(repo), *args]
    try:
        done = subprocess.run(  # noqa: S603 - git with an argument list, no shell
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT,
            env={**os.environ, **_ENV, **(env or {})},
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError as error:
        failure = Failure.GIT_MISSING if error.filename == "git" else Failure.NOT_A_REPOSITORY
        raise GitError(failure, str(error)) from None
    except NotADirectoryError as error:
        raise GitError(Failure.NOT_A_REPOSITORY, str(error)) from None
    except OSError as error:
        raise GitError(Failure.DISK, str(error)) from None
    except subprocess.TimeoutExpired:
        raise GitError(Failure.OTHER, f"git {args[0]} took longer than {TIMEOUT:.0f}s") from None
    if check and done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise GitError(_classify(done.stderr), lines[-1] if lines else f"git {args[0]} exited {done.returncode}")
    return done


def init_with_files(path: Path, branch: str, files: dict[str, str], message: str) -> None:
    """A new repository at ``path`` whose ``branch`` holds ``files`` in one commit (the demo's repository).

    The commit's author is given here, so it works on a machine where git has
    no identity configured.
    """
    path.mkdir(parents=True, exist_ok=True)
    run(path, "init", "--quiet", f"--initial-branch={branch}")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    run(path, "add", "--all")
    identity = ["-c", "user.name=Kandev demo", "-c", "user.email=demo@kandev.invalid"]
    run(path, *identity, "commit", "--quiet", "--no-verify", "-m", message)


def toplevel(path: Path) -> Path:
    """The root of the work tree ``path`` is in; :class:`GitError` (``NOT_A_REPOSITORY``) when none."""
    if not path.is_dir():
        raise GitError(Failure.NOT_A_REPOSITORY, f"{path} is not a directory")
    return Path(run(path, "rev-parse", "--show-toplevel").stdout.strip())


def default_branch(repo: Path) -> str:
    """The branch new work starts from: the remote's HEAD when there is one, else the checked-out branch."""
    remote = run(repo, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", check=False)
    if remote.returncode == 0 and remote.stdout.strip():
        return remote.stdout.strip().removeprefix("origin/")
    return run(repo, "symbolic-ref", "--short", "HEAD").stdout.strip()


def commit_of(repo: Path, ref: str) -> str:
    """The commit ``ref`` names (a branch, a tag, a sha); ``NO_SUCH_REF`` when none."""
    if ref.startswith("-"):
        raise GitError(Failure.NO_SUCH_REF, ref)
    done = run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if done.returncode != 0:
        # --quiet keeps a missing ref silent: anything said is about the repository itself.
        lines = done.stderr.strip().splitlines()
        raise GitError(_classify(done.stderr), lines[-1]) if lines else GitError(Failure.NO_SUCH_REF, ref)
    return done.stdout.strip()


def branch_exists(repo: Path, branch: str) -> bool:
    return run(repo, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}", check=False).returncode == 0


def is_valid_branch_name(repo: Path, branch: str) -> bool:
    return run(repo, "check-ref-format", "--branch", branch, check=False).returncode == 0


def add_worktree(repo: Path, path: Path, branch: str, base_commit: str | None) -> None:
    """Check ``branch`` out at ``path``: a new branch at ``base_commit``, or the existing one when it is None."""
    if base_commit is None:
        run(repo, "worktree", "add", "--end-of-options", str(path), branch)
    else:
        run(repo, "worktree", "add", "-b", branch, "--end-of-options", str(path), base_commit)


def remove_worktree(repo: Path, path: Path) -> None:
    """Remove the worktree at ``path``, uncommitted changes and all (the caller asked the operator)."""
    run(repo, "worktree", "remove", "--force", "--end-of-options", str(path))
    run(repo, "worktree", "prune")


def delete_branch(repo: Path, branch: str) -> None:
    run(repo, "branch", "-D", "--end-of-options", branch)


def unique_commits(repo: Path, branch: str) -> list[str]:
    """The commits on ``branch`` that no other branch, tag or remote-tracking ref holds: lost if it is deleted."""
    # --exclude applies to the --branches after it only, and names a branch there without refs/heads/.
    others = ["--not", f"--exclude={branch}", "--branches", "--tags", "--remotes"]
    done = run(repo, "rev-list", f"refs/heads/{branch}", *others)
    return done.stdout.split()


def changes(worktree: Path, base_commit: str) -> list[Change]:
    """What differs in ``worktree`` (committed or not, untracked files too) from ``base_commit``."""
    listed = run(worktree, "diff", "--name-status", "--no-renames", "-z", base_commit, "--").stdout.split("\0")
    found: dict[str, ChangeKind] = {}
    for status, path in zip(listed[::2], listed[1::2], strict=False):
        found[path] = _STATUS_KINDS.get(status[:1], "modified")
    untracked = run(worktree, "ls-files", "--others", "--exclude-standard", "-z").stdout.split("\0")
    for path in filter(None, untracked):
        found.setdefault(path, "added")
    return [Change(path, kind) for path, kind in sorted(found.items())]


def text_at(repo: Path, commit: str, path: str) -> str | None:
    """The file at ``path`` in ``commit`` as text; None when it is not there."""
    done = run(repo, "show", f"{commit}:{path}", check=False)
    return done.stdout if done.returncode == 0 else None


def remote_url(repo: Path, remote: str) -> str:
    """Where ``remote`` points: a configured remote's URL, or ``remote`` itself when it is a URL or a path."""
    if remote.startswith("-"):
        raise GitError(Failure.NO_REMOTE, remote)
    done = run(repo, "remote", "get-url", "--end-of-options", remote, check=False)
    return done.stdout.strip() if done.returncode == 0 else remote


def _credential_env(token: str) -> dict[str, str]:
    """``token`` as an HTTP Authorization header, given to git through its environment (git 2.31's GIT_CONFIG_*).

    Never in argv, never in a file: ``http.extraHeader`` set by
    ``GIT_CONFIG_KEY_0``/``GIT_CONFIG_VALUE_0`` reaches only this one git
    process. ``user:token`` names the user; a bare token goes as
    ``x-access-token``, which GitHub, GitLab and Gitea accept with a token.
    """
    user, _, secret = token.rpartition(":") if ":" in token else ("x-access-token", "", token)
    basic = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
    }


def push(repo: Path, remote: str, branch: str, token: str = "") -> str:
    """Push ``branch`` to the same name on ``remote`` (a remote's name or URL); the commit pushed.

    No force: a remote branch that moved on refuses it (``REJECTED``). An
    SSH remote uses the machine's own keys, and never stops to ask about a
    host key (``BatchMode``).
    """
    if remote.startswith("-") or branch.startswith("-"):
        raise GitError(Failure.NO_REMOTE, remote)
    commit = commit_of(repo, f"refs/heads/{branch}")
    env = {"GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")}
    if token:
        env |= _credential_env(token)
    refspec = f"refs/heads/{branch}:refs/heads/{branch}"
    run(repo, "push", "--porcelain", "--end-of-options", remote, refspec, env=env)
    return commit
