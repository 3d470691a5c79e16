"""Create (or refresh) a demo operator with a workspace, a board and a few tasks.

Idempotent: running it again resets the operator's password to the one it
prints and adds nothing twice. The e2e suite uses it to create operators.
"""

import json
import os
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from kandev_web.board.models import Board, Task, Workspace
from kandev_web.sessions.models import AgentProfile

DEMO_TASKS = [
    ("Add a health-check endpoint", "Expose /healthz returning the build version."),
    ("Fix flaky login redirect", "Users sometimes land on /login twice after signing in."),
    ("Write the release notes", "Summarise the changes since the last tag."),
]

MOCK_AGENT_PROFILE = "Mock agent"


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

    @transaction.atomic
    def handle(self, *args, **options):
        staff = not options["no_staff"]
        user, _ = get_user_model().objects.get_or_create(username=options["username"])
        user.is_staff = user.is_superuser = staff
        user.set_password(options["password"])
        user.save()

        workspace, _ = Workspace.objects.get_or_create(name=options["workspace"])
        workspace.members.add(user)
        board, created = Board.objects.get_or_create(workspace=workspace, name=options["board"])
        if created:
            board.add_default_steps()
        backlog = board.steps.first()
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
                "agent_id": "mock-agent",
                "command": [sys.executable, "-m", "kandev_web.mock_agent"],
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
