"""Register an executor host, and optionally move agent profiles onto it.

For deployers who script their set-up: the token comes from
``KANDEV_EXECUTOR_TOKEN`` (the one ``kandev-executor`` was started with), never
from argv, where any local user could read it.
"""

import os

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from kandev_web.sessions.models import AgentProfile, Executor

TOKEN_VAR = "KANDEV_EXECUTOR_TOKEN"


class Command(BaseCommand):
    help = "Create or update an executor host (token from KANDEV_EXECUTOR_TOKEN)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("url", help="e.g. ws://gpu-1:7310/executor/stream")
        parser.add_argument(
            "--assign",
            action="append",
            default=[],
            metavar="PROFILE",
            help="Run the agent profiles with this name on it; may be repeated.",
        )
        parser.add_argument("--workspace", help="Assign only the profiles of this workspace (by name).")

    @transaction.atomic
    def handle(self, *args, name, url, assign, workspace, **options):
        token = os.environ.get(TOKEN_VAR)
        if not token:
            raise CommandError(f"{TOKEN_VAR} is not set; it must hold the token kandev-executor was started with.")
        if not url.startswith(("ws://", "wss://")):
            raise CommandError("The URL must start with ws:// or wss://.")
        executor, created = Executor.objects.update_or_create(name=name, defaults={"url": url, "token": token})
        profiles = AgentProfile.objects.filter(name__in=assign)
        if workspace:
            profiles = profiles.filter(workspace__name=workspace)
        assigned = profiles.update(executor=executor)
        if assign and not assigned:
            raise CommandError(f"No agent profile is named {', '.join(assign)}.")
        self.stdout.write(f"{'Created' if created else 'Updated'} executor {name}; {assigned} profile(s) assigned.")
