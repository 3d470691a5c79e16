from django.contrib import admin

from .models import Board, Membership, Step, Task, Workspace


class StepInline(admin.TabularInline):
    model = Step
    extra = 0


class MembershipInline(admin.TabularInline):
    """Who is in the workspace, and which of them are its admins."""

    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    inlines = [MembershipInline]


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace"]
    inlines = [StepInline]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["title", "board", "step", "state"]
    list_filter = ["state"]
