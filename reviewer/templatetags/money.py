"""Money in the LLM's price currency: 'USD 0.42'; sub-cent sums keep four decimals ('USD 0.0031')."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django import template
from django.conf import settings

register = template.Library()


@register.filter
def money(value) -> str:
    if value is None or value == "":
        return "—"
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return "—"
    places = "0.0001" if 0 < abs(amount) < Decimal("0.01") else "0.01"
    return f"{settings.LLM_PRICE_CURRENCY} {amount.quantize(Decimal(places))}"
