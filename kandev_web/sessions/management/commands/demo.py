"""Create (or refresh) a demo operator with a workspace, a board and a few tasks.

``scripts/run`` runs it as it is, which also sets up what shows the product
with nothing to configure: a small git repository under ``var/`` registered as
the workspace's "Demo repository", a task on it whose agent asks a structured
question, and ``features.acpElicitation``'s stored override on (the profiles
in ``profiles.toml`` keep the spec's defaults; an override an operator stored
is kept). Idempotent: running it again resets the operator's password to the
one it prints and adds nothing twice. The e2e suite uses it with
``--no-showcase`` to create operators, so no test gets the flag by accident.
"""

import json
import os
import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from kandev_web import git
from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Board, Membership, Role, Task, Workspace
from kandev_web.flags.models import FlagOverride
from kandev_web.flags.registry import ACP_BOOLEAN_CONFIG_OPTIONS, ACP_ELICITATION
from kandev_web.mock_agent.store import ENV_VAR as MOCK_SESSION_DIR
from kandev_web.repositories.models import Repository, Worktree
from kandev_web.sessions.scenarios import MOCK_AGENT_ID

DEMO_TASKS = [
    ("Add a health-check endpoint", "Expose /healthz returning the build version."),
    ("Fix flaky login redirect", "Users sometimes land on /login twice after signing in."),
    ("Write the release notes", "Summarise the changes since the last tag."),
]

MOCK_AGENT_PROFILE = "Mock agent"

DEMO_REPOSITORY = "Demo repository"
DEMO_REPOSITORY_DIR = "demo-repository"
DEMO_REPOSITORY_FILES = {
    "README.md": "# Demo repository\n\nA small repository kandev-web's demo gives its agents to work on.\n",
    "app.py": 'def health():\n    return {"status": "ok"}\n',
}
#: The task the README's first screen points to: its agent asks a question in the overlay.
DEMO_QUESTION_TASK = (
    "See an agent ask you a question",
    "Choose the scenario \u201cAsk a structured question\u201d, click Start agent and answer in the overlay.",
)


class Command(BaseCommand):
    help = "Create a demo operator, workspace, board, tasks and the Mock agent profile."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="demo")
        parser.add_argument("--password", default=os.environ.get("KANDEV_DEMO_PASSWORD", "kandev-demo"))
        parser.add_argument("--workspace", default="Demo workspace")
        parser.add_argument("--board", default="Demo board")
        parser.add_argument("--no-staff", action="store_true", help="Create an operator without admin rights.")
        parser.add_argument("--no-tasks", action="store_true", help="Leave the board empty.")
        parser.add_argument("--json", action="store_true", help="Print the created ids as JSON.")
        parser.add_argument(
            "--repository",
            default=None,
            help="Where the demo git repository is made (default: var/demo-repository).",
        )
        parser.add_argument(
            "--no-showcase",
            action="store_true",
            help=(
                "No demo repository, no task on it, the flags left alone and a mock agent without modes,"
                " commands or options (tests)."
            ),
        )

    @transaction.atomic
    def handle(self, *args, **options):
        staff = not options["no_staff"]
        user, _ = get_user_model().objects.get_or_create(username=options["username"])
        user.is_staff = user.is_superuser = staff
        user.set_password(options["password"])
        user.save()

        workspace, _ = Workspace.objects.get_or_create(name=options["workspace"])
        # Staff of the demo manage its workspace (and, as superusers, the deployment's settings).
        Membership.objects.update_or_create(
            workspace=workspace, user=user, defaults={"role": Role.ADMIN if staff else Role.MEMBER}
        )
        board, created = Board.objects.get_or_create(workspace=workspace, name=options["board"])
        if created:
            board.add_default_steps()
        backlog = board.steps.first()
        if not options["no_showcase"]:
            path = Path(options["repository"] or settings.VAR_DIR / DEMO_REPOSITORY_DIR).resolve()
            self._showcase(workspace, backlog, path, with_task=not options["no_tasks"])
        if not options["no_tasks"]:
            for position, (title, description) in enumerate(DEMO_TASKS):
                Task.objects.get_or_create(
                    board=board,
                    title=title,
                    defaults={"description": description, "step": backlog, "position": position},
                )
        AgentProfile.objects.update_or_create(
            workspace=workspace,
            name=MOCK_AGENT_PROFILE,
            defaults={
                "agent_id": MOCK_AGENT_ID,
                # The showcase's offers modes, slash commands and an on/off option in the composer; the tests'
                # plays scenarios alone unless a test asks for them (e2e/test_modes_commands_options.py).
                "command": [sys.executable, "-m", "kandev_web.mock_agent"]
                + ([] if options["no_showcase"] else ["--session-settings"]),
                # It keeps its sessions on disk, as the Claude bridge does: a session whose agentctl died resumes.
                "env": {MOCK_SESSION_DIR: str(settings.VAR_DIR / "mock-sessions")},
            },
        )

        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "user_id": user.pk,
                        "workspace_id": workspace.pk,
                        "board_id": board.pk,
                        "step_ids": list(board.steps.values_list("pk", flat=True)),
                        "task_ids": list(board.tasks.values_list("pk", flat=True)),
                    }
                )
            )
        else:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Demo operator ready: username {user.username!r}, password {options['password']!r}"
                    f"{' (staff)' if staff else ''}."
                )
            )

    def _showcase(self, workspace: Workspace, backlog, path: Path, *, with_task: bool) -> None:
        """What makes the product visible at once: the flags on, a repository, and a task whose agent asks."""
        for flag in (ACP_ELICITATION, ACP_BOOLEAN_CONFIG_OPTIONS):
            _, stored = FlagOverride.objects.get_or_create(key=flag, defaults={"value": True})
            if stored:
                self.stdout.write(f"Turned {flag} on (a stored override: /settings/feature-toggles/).")
        repository = None
        try:
            if not (path / ".git").exists():
                git.init_with_files(path, "main", DEMO_REPOSITORY_FILES, "Start the demo repository")
                self.stdout.write(f"Created the demo git repository at {path}.")
        except git.GitError as error:
            # The demo still works without one: its agent then runs in an empty directory.
            self.stderr.write(f"No demo repository: git failed ({error.detail or error.failure.value}).")
        else:
            repository, _ = Repository.objects.update_or_create(
                workspace=workspace, name=DEMO_REPOSITORY, defaults={"path": str(path), "default_branch": "main"}
            )
        if not with_task:
            return
        self.stdout.write(
            f"To see a question answered: open the task {DEMO_QUESTION_TASK[0]!r}, choose the scenario"
            " 'Ask a structured question' and click Start agent."
        )
        title, description = DEMO_QUESTION_TASK
        # Made before the other demo tasks, so on a fresh database it is the board's first card.
        task, created = Task.objects.get_or_create(
            board=backlog.board, title=title, defaults={"description": description, "step": backlog, "position": 0}
        )
        if created and repository is not None:
            Worktree.objects.create(task=task, repository=repository)
