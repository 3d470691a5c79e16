"""Showing what agents spend: token counts kept short, costs in the viewer's number format with their currency."""

from decimal import Decimal

from django import template
from django.utils import formats

register = template.Library()


@register.filter
def tokens(count) -> str:
    """950 → "950", 18,400 → "18.4k", 1,200,000 → "1.2M": a context window read at a glance."""
    if count is None:
        return ""
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if count >= size:
            value = round(count / size, 1)
            places = 0 if value >= 100 or value == int(value) else 1
            return f"{formats.number_format(value, decimal_pos=places)}{suffix}"
    return formats.number_format(count)


@register.simple_tag
def money(amount, currency: str) -> str:
    """A cost in the viewer's number format, two decimals (four below a cent), then its currency code."""
    if amount is None:
        return ""
    places = 4 if Decimal(0) < abs(amount) < Decimal("0.01") else 2
    return f"{formats.number_format(amount, decimal_pos=places, use_l10n=True)} {currency}"


@register.filter
def amount(value) -> str:
    """A cost for a ``data-*`` attribute: plain digits, no trailing zeros, whatever the database summed it as."""
    if value is None or value == "":  # "": a missing one, as templates resolve it
        return ""
    return format(Decimal(value).normalize(), "f")
