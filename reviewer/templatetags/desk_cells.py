"""`{% desk_cell f %}`: a field's cell on the desk (reviewer/desk/cells.py), from the page's context."""

from __future__ import annotations

from django import template

from reviewer.desk.cells import cell_html

register = template.Library()


@register.simple_tag(takes_context=True)
def desk_cell(context, f):
    return cell_html(f, context=context, desk_url=context.get("desk_url", ""), edit_url=context.get("edit_url", ""),
                     can_edit=bool(context.get("can_edit")), oob=bool(context.get("cell_oob")))
