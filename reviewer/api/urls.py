"""Mounted at /api/v1/ by reviewer/urls.py; every name is in the "api" namespace."""

from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, re_path

from reviewer.api.api import api
from reviewer.api.errors import problem_response


def not_found(request: HttpRequest) -> HttpResponse:
    """Any other path under /api/v1/: a problem too, not the app's HTML page."""
    return problem_response(request, status=404, detail="No such API operation: see /api/v1/docs.")


def method_problem(view):
    """ninja answers a method an operation does not have with a plain 405: a problem too, with its Allow."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if response.status_code != 405:
            return response
        allowed = response.get("Allow", "")
        return problem_response(request, status=405, detail=f"{request.method} is not an operation here; "
                                f"use {allowed or 'another method'}.", headers={"Allow": allowed})

    return wrapped


app_name = "api"
urlpatterns = [URLPattern(p.pattern, method_problem(p.callback), p.default_args, p.name) for p in api.urls[0]]
urlpatterns.append(re_path(r"", not_found, name="not_found"))
