from django.contrib import admin

from .models import Message, TaskSession


@admin.register(TaskSession)
class TaskSessionAdmin(admin.ModelAdmin):
    list_display = ["task", "state", "activity", "created_at"]
    list_filter = ["state"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["session", "type", "author_type", "requests_input", "created_at"]
    list_filter = ["type"]
