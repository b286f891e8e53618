from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from extraction import selectors
from reviewer.access import role_required
from reviewer.roles import ADMIN, SUPERVISOR


@role_required(SUPERVISOR, ADMIN)
def audit_home(request: HttpRequest) -> HttpResponse:
    return render(request, "audit/home.html", {"batches": selectors.audit_batches()})
