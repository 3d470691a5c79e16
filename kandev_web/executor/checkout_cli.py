"""``kandev-checkout [--root DIR] < {"op": ..., "args": {...}}``: one checkout step, run over SSH.

A repository on an SSH executor host has its task worktrees made there: the
web process runs this command through its SSH connection, one step of
``kandev_web/checkouts.py`` per run, the request on stdin (argv is public on
that host) and the answer, one JSON line, on stdout: ``{"result": ...}``, or
``{"error": {"failure", "detail"}}`` with ``failure`` a ``git.Failure`` value
(``invalid`` for a request that does not fit).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kandev_web import checkouts, git

INVALID = "invalid"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kandev-checkout", description="One step of a task's git checkout here.")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("kandev-worktrees"),
        help="where tasks' worktrees are made (default: ./kandev-worktrees, under the login directory over SSH)",
    )
    options = parser.parse_args(argv)
    print(json.dumps(answer(sys.stdin.read(), options.root.expanduser().resolve())))
    return 0


def answer(request: str, root: Path) -> dict[str, Any]:
    """The answer to one request (JSON text), never an exception: the caller reads it off stdout."""
    try:
        payload = json.loads(request)
    except ValueError as error:
        return {"error": {"failure": INVALID, "detail": f"not JSON: {error}"}}
    operation, args = (payload.get("op"), payload.get("args", {})) if isinstance(payload, dict) else (None, None)
    if found := checkouts.problems(operation, args):
        return {"error": {"failure": INVALID, "detail": "; ".join(found)}}
    assert isinstance(operation, str)  # problems() found none
    assert isinstance(args, dict)
    try:
        return {"result": checkouts.LocalCheckouts(root).perform(operation, args)}
    except git.GitError as error:
        return {"error": {"failure": error.failure.value, "detail": error.detail}}


if __name__ == "__main__":
    sys.exit(main())
