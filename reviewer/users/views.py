"""Admins manage accounts on the app's own pages (no Django admin site needed)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.forms import SetPasswordForm, UsernameField
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.validators import RegexValidator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from reviewer.access import role_required
from reviewer.roles import ADMIN, ROLES
from reviewer.users.services import UserError, user_create, user_set_password, user_update

ROLE_CHOICES = [(r, r) for r in ROLES]


class UserCreateForm(forms.Form):
    # NFKC-normalised first, as the model stores it: normalising can change a name's letters and length.
    username = UsernameField(max_length=150, validators=[
        RegexValidator(r"^[\w.@+-]+\Z", "Letters, digits and @ . + - _ only.")])
    email = forms.EmailField(required=False)
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple, required=False)
    password = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def clean_password(self):
        password = self.cleaned_data["password"]
        validate_password(password, User(username=self.cleaned_data.get("username", "")))
        return password


class UserEditForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple, required=False)
    is_active = forms.BooleanField(required=False, label="Active (may log in)")


def get_user(request: HttpRequest, user_id: int) -> User:
    """The access helper for an account: 404 when it does not exist (roles are checked by the view)."""
    return get_object_or_404(User, pk=user_id)


@role_required(ADMIN)
def user_list(request: HttpRequest) -> HttpResponse:
    users = User.objects.order_by("username").prefetch_related("groups")
    rows = [{"user": u, "roles": sorted(g.name for g in u.groups.all() if g.name in ROLES)} for u in users]
    return render(request, "users/list.html", {"rows": rows})


@role_required(ADMIN)
def user_new(request: HttpRequest) -> HttpResponse:
    form = UserCreateForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            user = user_create(username=form.cleaned_data["username"], email=form.cleaned_data["email"],
                               password=form.cleaned_data["password"], roles=form.cleaned_data["roles"])
        except UserError as err:
            form.add_error("username", str(err))
        else:
            messages.success(request, f"{user.username} can log in now.")
            return redirect("user_list")
    return render(request, "users/new.html", {"form": form}, status=400 if form.errors else 200)


@role_required(ADMIN)
def user_edit(request: HttpRequest, user_id: int) -> HttpResponse:
    account = get_user(request, user_id)
    current = [g.name for g in account.groups.filter(name__in=ROLES)]
    form = UserEditForm(request.POST if request.method == "POST" else None,
                        initial={"roles": current, "is_active": account.is_active})
    password_form = SetPasswordForm(account)
    if request.method == "POST" and form.is_valid():
        try:
            user_update(user=account, actor=request.user, roles=form.cleaned_data["roles"],
                        is_active=form.cleaned_data["is_active"])
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
    form = UserEditForm(initial={"roles": [g.name for g in account.groups.filter(name__in=ROLES)],
                                 "is_active": account.is_active})
    return render(request, "users/edit.html", {"account": account, "form": form, "password_form": password_form},
                  status=400)
