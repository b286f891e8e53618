"""Responses for a logged-in user are never stored by a cache; no text enters with a NUL character (address,
query, form, JSON body or cookie); a file store that is away gets a page saying so (a problem under /api/)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError
from django.contrib import messages
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django_htmx.http import HttpResponseClientRefresh

from extraction.common.nul import nul_at
from reviewer.api.errors import API_PREFIX, problem_response

log = logging.getLogger(__name__)


def private_cache_for_users(get_response: Callable[[HttpRequest], HttpResponse]):
    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if request.user.is_authenticated:
            # Shared caches (proxies, CDNs) never keep a user's response: `private`, and no `public` survives.
            # A page is not stored even by the browser, so that after logout a shared browser's history and
            # back button cannot show it. A file that chose its own lifetime (a page image's max-age) keeps it.
            own_lifetime = "max-age" in response.get("Cache-Control", "")
            html = response.get("Content-Type", "").startswith("text/html")
            if html or not own_lifetime:
                patch_cache_control(response, private=True, no_store=True)
            else:
                patch_cache_control(response, private=True)
        return response

    return middleware


NUL_REFUSED = ("The field “{name}” contains a NUL character (\\x00), which no text in Proofdesk may hold. "
               "Remove it and send the form again.")
NUL_IN_ADDRESS = "The address contains a NUL character (\\x00), which no address in Proofdesk holds."
_JSON_TYPES = ("application/json", "application/merge-patch+json", "application/problem+json")


def _field_with_nul(values: QueryDict) -> str | None:
    """The name of the first field whose name or value holds a NUL; None when none does. Uploaded files are
    not form values (request.FILES): their bytes are the intake's to judge."""
    for name, items in values.lists():
        if "\x00" in name or any("\x00" in item for item in items):
            return name.replace("\x00", "")[:60]
    return None


def _json_field_with_nul(request: HttpRequest) -> str | None:
    """The place of the first NUL in a JSON body ('value', 'fields.0.label'); None when there is none, or the
    body is not JSON, or it is over the size the view refuses anyway (the view says so, not this)."""
    if request.method not in ("POST", "PUT", "PATCH") or request.content_type not in _JSON_TYPES:
        return None
    try:
        data = json.loads(request.body)
    except (RequestDataTooBig, ValueError, RecursionError):
        return None
    place = nul_at(data)
    return None if place is None else (place or "body")[:60]


def _nul_in_request(request: HttpRequest) -> str | None:
    """Why the request is refused for a NUL anywhere text enters (its address, query, form or JSON body);
    None when it holds none. Cookies are not here: a cookie with a NUL is dropped before sessions read it."""
    if "\x00" in request.path_info:
        return NUL_IN_ADDRESS
    name = _field_with_nul(request.GET)
    if name is None and request.method == "POST":
        name = _field_with_nul(request.POST)
    if name is None:
        name = _json_field_with_nul(request)
    return None if name is None else NUL_REFUSED.format(name=name)


def drop_cookies_with_nul(get_response: Callable[[HttpRequest], HttpResponse]):
    """A cookie whose name or value holds a NUL is no cookie Proofdesk set: it is dropped, as if not sent,
    before the session reads its key from the database (which refuses \\x00) for anyone, signed in or not."""

    def middleware(request: HttpRequest) -> HttpResponse:
        for name in [n for n, v in request.COOKIES.items() if "\x00" in n or "\x00" in v]:
            del request.COOKIES[name]
        return get_response(request)

    return middleware


def refuse_nul_characters(get_response: Callable[[HttpRequest], HttpResponse]):
    """A NUL in the address or in a query, form or JSON value is refused with a 400 and a message, in one
    place for every view: the database cannot store it (PostgreSQL text and JSON refuse \\x00) and no person
    types it. Under /api/ the 400 is application/problem+json, like every answer there."""

    def middleware(request: HttpRequest) -> HttpResponse:
        reason = _nul_in_request(request)
        if reason is None:
            return get_response(request)
        if request.path_info.startswith(API_PREFIX):
            return problem_response(request, status=400, detail=reason)
        if request.headers.get("HX-Request") == "true":
            # htmx swaps no 400: the page reloads and shows the message instead of doing nothing.
            messages.error(request, reason)
            response = HttpResponseClientRefresh()
            response.status_code = 400  # htmx reloads on the header whatever the status; other clients see a 400
            return response
        return render(request, "400.html", {"reason": reason}, status=400)

    return middleware


class StorageUnavailable:
    """A file store (S3) that refuses or does not answer within its timeouts (settings.AWS_S3_CLIENT_CONFIG)
    gets a page saying so, with 503, instead of a server error. An upload is one transaction, so a failed one
    left no rows behind; the worker turns the same faults into a retryable document error."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, BotoCoreError | ClientError):  # a missing object is FileNotFoundError
            return None
        log.warning("the file store failed %s %s (%s: %s)", request.method, request.path,
                    type(exception).__name__, exception)
        if request.path_info.startswith(API_PREFIX):
            return problem_response(request, status=503, title="Storage unavailable", headers={"Retry-After": "60"},
                                    detail="The file store does not answer. Every stored file is kept, and an "
                                    "upload refused now left nothing behind: send it again later.")
        upload = request.method == "POST" and getattr(request.resolver_match, "url_name", "") == "batch_upload"
        response = render(request, "storage_unavailable.html", {"upload": upload}, status=503)
        response["Retry-After"] = "60"
        return response
