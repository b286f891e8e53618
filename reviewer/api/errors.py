"""Every error of the API as `application/problem+json` (RFC 9457): type, title, status, detail, instance,
and, when one part of the request is at fault, `field` (its name) and `errors` (each fault with its field)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError

PROBLEM = "application/problem+json"
API_PREFIX = "/api/"  # every answer under it, errors of the server's own limits included, is a problem
# Where ninja says a parameter came from; a field's name is what follows.
_SOURCES = {"body", "query", "path", "form", "file", "header", "cookie"}


class ApiProblem(Exception):
    """An error for the client, with the field at fault when there is one."""

    def __init__(self, status: int, detail: str, *, field: str | None = None, title: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.field = status, detail, field
        self.title = title or HTTPStatus(status).phrase
        self.headers = headers or {}


def problem_response(request: HttpRequest, *, status: int, detail: str, title: str | None = None,
                     errors: list[dict[str, str]] | None = None, headers: dict[str, str] | None = None
                     ) -> HttpResponse:
    body: dict[str, Any] = {"type": "about:blank", "title": title or HTTPStatus(status).phrase, "status": status,
                            "detail": detail, "instance": request.path}
    if errors:
        body["field"] = errors[0]["field"]
        body["errors"] = errors
    response = JsonResponse(body, status=status, content_type=PROBLEM, json_dumps_params={"ensure_ascii": False})
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def too_big_detail() -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE / (1024 * 1024)
    return (f"The request's body is over the {limit:g} MB this server reads (files go in a multipart upload, "
            "which has its own limit); nothing was done.")


def field_of(loc: list | tuple) -> str:
    """The field a pydantic location names: ('query', 'status') -> 'status', ('form', 'max_rounds') ->
    'max_rounds', ('body', 'edit', 'value') -> 'value' (the operation's argument name is not the client's)."""
    parts = [str(p) for p in loc if not isinstance(p, int)]
    while parts and parts[0] in _SOURCES:
        parts = parts[1:]
    return parts[-1] if parts else ""


def install(api: NinjaAPI) -> None:
    """Register the handlers that turn every error into a problem."""

    @api.exception_handler(ApiProblem)
    def _problem(request, exc: ApiProblem):
        errors = [{"field": exc.field, "detail": exc.detail}] if exc.field else None
        return problem_response(request, status=exc.status, detail=exc.detail, title=exc.title, errors=errors,
                                headers=exc.headers)

    @api.exception_handler(ValidationError)
    def _invalid(request, exc: ValidationError):
        errors = [{"field": field_of(e.get("loc", ())), "detail": str(e.get("msg", "is not valid"))}
                  for e in exc.errors]
        detail = "; ".join(f"{e['field']}: {e['detail']}" if e["field"] else e["detail"] for e in errors)
        return problem_response(request, status=422, detail=detail or "The request is not valid.", errors=errors)

    @api.exception_handler(AuthenticationError)
    def _unauthenticated(request, exc):
        return problem_response(request, status=401, detail="Send a live API token: Authorization: Bearer <token>.",
                                headers={"WWW-Authenticate": 'Bearer realm="proofdesk"'})

    @api.exception_handler(Throttled)
    def _throttled(request, exc: Throttled):
        wait = max(1, int(exc.wait or 1))
        return problem_response(request, status=429, detail=f"Too many requests for this token; try again in "
                                f"{wait} s.", headers={"Retry-After": str(wait)})

    @api.exception_handler(HttpError)
    def _http(request, exc: HttpError):
        return problem_response(request, status=exc.status_code, detail=str(exc))

    @api.exception_handler(PermissionDenied)
    def _forbidden(request, exc):
        return problem_response(request, status=403, detail=str(exc) or "Your role does not allow this.")

    @api.exception_handler(RequestDataTooBig)
    def _too_big(request, exc):  # answered here, not by Django's handler400, which logs a traceback for it
        return problem_response(request, status=413, detail=too_big_detail())

    @api.exception_handler(Http404)
    def _not_found(request, exc):
        return problem_response(request, status=404, detail=str(exc) or "Not found.")
