from django.contrib import admin

from .models import Board, Step, Task, Workspace


class StepInline(admin.TabularInline):
    model = Step
    extra = 0


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    filter_horizontal = ["members"]


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace"]
    inlines = [StepInline]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["title", "board", "step", "state"]
    list_filter = ["state"]
