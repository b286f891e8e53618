"""The team a new object is made in: a choice among the teams where one holds the role that makes it."""

from __future__ import annotations

from django import forms

from extraction.models import Team
from reviewer.teams.scope import scoped


class TeamChoiceField(forms.ModelChoiceField):
    """Optional: a person in one such team never needs to name it (the first is taken)."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("label", "Team")
        super().__init__(queryset=Team.objects.none(), empty_label=None, required=False, **kwargs)


def teams_offered(form: forms.Form, *, user, roles: tuple[str, ...], field: str = "team") -> forms.Form:
    """`form`'s team field offers the teams in which `user` holds one of `roles`; once the form is valid its
    value is a team of those (the first when none was named)."""
    offered = scoped(Team, user=user, roles=roles)
    form.fields[field].queryset = offered
    form.many_teams = offered.count() > 1  # the choice is shown only where there is one to make
    if form.is_bound and form.is_valid() and form.cleaned_data.get(field) is None:
        form.cleaned_data[field] = offered.first()
    return form
