from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from reviewer.access import user_roles
from reviewer.roles import START_PAGES


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Each role lands on its own start page."""
    roles = user_roles(request.user)
    for role, url_name in START_PAGES:
        if role in roles:
            return redirect(url_name)
    raise PermissionDenied("Your account has no Proofdesk role yet. Ask an administrator to assign one.")
