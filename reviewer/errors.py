"""The server's own error answers (Django's handler400/403/404/500): pages for people, and under /api/
application/problem+json, like every other answer there, the request-size limit included."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views import defaults

from reviewer.api.errors import API_PREFIX, problem_response, too_big_detail
from reviewer.batches import views as batches


def _api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _api(request):
        return batches.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        return problem_response(request, status=413, detail=too_big_detail())
    return problem_response(request, status=400, detail="The request could not be read.")


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _api(request):
        return defaults.permission_denied(request, exception)
    return problem_response(request, status=403, detail=str(exception) or "Your role does not allow this.")


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _api(request):
        return defaults.page_not_found(request, exception)
    return problem_response(request, status=404, detail="No such address in the API; see /api/v1/docs.")


def server_error(request: HttpRequest) -> HttpResponse:
    if not _api(request):
        return defaults.server_error(request)
    return problem_response(request, status=500, detail="The server failed on this request; it is logged. "
                            "Try again later, or tell the team running this Proofdesk.")
