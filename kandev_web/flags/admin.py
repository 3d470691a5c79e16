from django.contrib import admin

from .models import FlagOverride


@admin.register(FlagOverride)
class FlagOverrideAdmin(admin.ModelAdmin):
    list_display = ["key", "value", "updated_by", "updated_at"]
    readonly_fields = ["updated_at"]
