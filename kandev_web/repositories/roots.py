"""Where a repository may be registered without a superuser: under ``KANDEV_REPOSITORY_ROOTS``, and nobody else's.

A path on the web machine is resolved first (symlinks, ``..``, ``/proc/self/cwd``
and the like), so what is compared is the directory git would work in, and a
path outside the roots is refused before git is even asked about it. On an
executor host it cannot be resolved from here: the top level git reports
there (symlinks resolved by git) is compared instead, after the check.
"""

import os
import posixpath
from collections.abc import Iterable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def configured_roots() -> list[str]:
    """``KANDEV_REPOSITORY_ROOTS``, each made canonical; ``ImproperlyConfigured`` for a relative one."""
    roots = []
    for root in settings.KANDEV_REPOSITORY_ROOTS:
        if not posixpath.isabs(root):
            raise ImproperlyConfigured(f"KANDEV_REPOSITORY_ROOTS: {root!r} is not an absolute path.")
        roots.append(_normal(root))
    return roots


def resolved_here(path: str) -> str:
    """``path`` on this machine as the kernel would reach it: symlinks and ``/proc`` links followed."""
    return os.path.realpath(path)


def _normal(path: str) -> str:
    # normpath keeps POSIX's implementation-defined leading "//"; Linux reads it as "/".
    return "/" + posixpath.normpath(path).lstrip("/")


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it, compared as normalised absolute paths (no file system)."""
    path, root = _normal(path), _normal(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def inside_any(path: str, roots: Iterable[str]) -> bool:
    return any(inside(path, root) for root in roots)


def overlaps(path: str, other: str) -> bool:
    """Whether one of the two directories holds the other (or they are one)."""
    return inside(path, other) or inside(other, path)
