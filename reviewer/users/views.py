"""Admins manage accounts on the app's own pages (no Django admin site needed)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.forms import SetPasswordForm, UsernameField
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.validators import RegexValidator
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from extraction.models import Team
from reviewer.access import role_required, team_ids
from reviewer.models import Membership
from reviewer.roles import ADMIN, ROLES
from reviewer.teams.forms import TeamChoiceField, teams_offered
from reviewer.teams.scope import scoped
from reviewer.users.services import UserError, user_create, user_set_password, user_update

ROLE_CHOICES = [(r, r) for r in ROLES]


class UserCreateForm(forms.Form):
    # NFKC-normalised first, as the model stores it: normalising can change a name's letters and length.
    username = UsernameField(max_length=150, validators=[
        RegexValidator(r"^[\w.@+-]+\Z", "Letters, digits and @ . + - _ only.")])
    email = forms.EmailField(required=False)
    team = TeamChoiceField()
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple, required=False)
    password = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def clean_password(self):
        password = self.cleaned_data["password"]
        validate_password(password, User(username=self.cleaned_data.get("username", "")))
        return password


class UserEditForm(forms.Form):
    team = TeamChoiceField(label="Roles in the team")
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple, required=False)
    is_active = forms.BooleanField(required=False, label="Active (may log in)")


def _admin_teams(request: HttpRequest):
    return scoped(Team, user=request.user, roles=(ADMIN,))


def _with_teams(form: forms.Form, request: HttpRequest) -> forms.Form:
    """The teams an admin gives roles in: those they administer."""
    return teams_offered(form, user=request.user, roles=(ADMIN,))


def _visible_users(request: HttpRequest):
    """An admin manages the people of the teams they administer, and people in no team yet (who see nothing)."""
    members = Membership.objects.filter(team_id__in=team_ids(request.user, ADMIN)).values("user_id")
    return User.objects.filter(models.Q(pk__in=members) | models.Q(memberships__isnull=True)).distinct()


def get_user(request: HttpRequest, user_id: int) -> User:
    """The access helper for an account: 404 when it does not exist or is not one the admin manages."""
    return get_object_or_404(_visible_users(request), pk=user_id)


def _team_roles(account: User, teams) -> list[str]:
    names = {t.pk: t.name for t in teams}
    return [f"{names[m.team_id]}: {m.role}" if len(names) > 1 else m.role
            for m in account.memberships.all() if m.team_id in names and m.role in ROLES]


@role_required(ADMIN)
def user_list(request: HttpRequest) -> HttpResponse:
    teams = list(_admin_teams(request))
    users = _visible_users(request).order_by("username").prefetch_related("memberships")
    rows = [{"user": u, "roles": _team_roles(u, teams)} for u in users]
    return render(request, "users/list.html", {"rows": rows})


@role_required(ADMIN)
def user_new(request: HttpRequest) -> HttpResponse:
    form = _with_teams(UserCreateForm(request.POST if request.method == "POST" else None), request)
    if request.method == "POST" and form.is_valid():
        try:
            user = user_create(username=form.cleaned_data["username"], email=form.cleaned_data["email"],
                               password=form.cleaned_data["password"], roles=form.cleaned_data["roles"],
                               team=form.cleaned_data["team"])
        except UserError as err:
            form.add_error("username", str(err))
        else:
            messages.success(request, f"{user.username} can log in now.")
            return redirect("user_list")
    return render(request, "users/new.html", {"form": form}, status=400 if form.errors else 200)


@role_required(ADMIN)
def user_edit(request: HttpRequest, user_id: int) -> HttpResponse:
    account = get_user(request, user_id)
    form = _with_teams(UserEditForm(request.POST if request.method == "POST" else None,
                                    initial=_edit_initial(request, account)), request)
    password_form = SetPasswordForm(account)
    if request.method == "POST" and form.is_valid():
        try:
            user_update(user=account, actor=request.user, roles=form.cleaned_data["roles"],
                        is_active=form.cleaned_data["is_active"], team=form.cleaned_data["team"])
        except UserError as err:
            form.add_error(None, str(err))
        else:
            messages.success(request, f"{account.username} saved.")
            return redirect("user_list")
    return render(request, "users/edit.html", {"account": account, "form": form, "password_form": password_form},
                  status=400 if form.errors else 200)


@role_required(ADMIN)
def user_password(request: HttpRequest, user_id: int) -> HttpResponse:
    """Set a new password for the account (the admin tells its owner)."""
    account = get_user(request, user_id)
    if request.method != "POST":
        return redirect("user_edit", user_id=account.id)
    password_form = SetPasswordForm(account, request.POST)
    if password_form.is_valid():
        user_set_password(user=account, password=password_form.cleaned_data["new_password1"])
        messages.success(request, f"{account.username}'s password was reset.")
        return redirect("user_list")
    form = _with_teams(UserEditForm(initial=_edit_initial(request, account)), request)
    return render(request, "users/edit.html", {"account": account, "form": form, "password_form": password_form},
                  status=400)


def _edit_initial(request: HttpRequest, account: User) -> dict:
    """The roles in the team asked for (?team=), else in the first team the admin manages the account in."""
    teams = list(_admin_teams(request))
    asked = request.GET.get("team", "")
    held = {t: [m.role for m in account.memberships.all() if m.team_id == t] for t in (x.pk for x in teams)}
    team = next((t.pk for t in teams if str(t.pk) == asked), None) or next(
        (t for t, roles in held.items() if roles), teams[0].pk if teams else None)
    return {"team": team, "roles": held.get(team, []), "is_active": account.is_active}
