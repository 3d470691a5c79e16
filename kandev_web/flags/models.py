from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class FlagOverride(models.Model):
    """An operator's stored choice for a runtime flag; absent means "use default"."""

    key = models.CharField(_("key"), max_length=200, unique=True)
    value = models.BooleanField(_("value"))
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name = _("flag override")
        verbose_name_plural = _("flag overrides")

    def __str__(self):
        return f"{self.key}={self.value}"
