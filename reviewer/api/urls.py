"""Mounted at /api/v1/ by reviewer/urls.py; every name is in the "api" namespace."""

from django.http import HttpRequest, HttpResponse
from django.urls import re_path

from reviewer.api.api import api
from reviewer.api.errors import problem_response


def not_found(request: HttpRequest) -> HttpResponse:
    """Any other path under /api/v1/: a problem too, not the app's HTML page."""
    return problem_response(request, status=404, detail="No such API operation: see /api/v1/docs.")


app_name = "api"
urlpatterns = [*api.urls[0], re_path(r"", not_found, name="not_found")]
