from django.contrib import admin

from .models import Repository, Worktree


@admin.register(Repository)
class RepositoryAdmin(admin.ModelAdmin):
    list_display = ["name", "path", "default_branch", "workspace", "executor"]


@admin.register(Worktree)
class WorktreeAdmin(admin.ModelAdmin):
    list_display = ["task", "repository", "branch", "path", "created_at"]
    # Made by git when the task's first agent starts: read here, not edited.
    readonly_fields = ["branch", "path", "base_commit", "created_at"]
