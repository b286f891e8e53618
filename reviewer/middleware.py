"""Responses for a logged-in user are never stored by a cache; no form value carries a NUL character; a file
store that is away gets a page saying so."""

from __future__ import annotations

import logging
from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django_htmx.http import HttpResponseClientRefresh

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


def _field_with_nul(values: QueryDict) -> str | None:
    """The name of the first field whose name or value holds a NUL; None when none does. Uploaded files are
    not form values (request.FILES): their bytes are the intake's to judge."""
    for name, items in values.lists():
        if "\x00" in name or any("\x00" in item for item in items):
            return name.replace("\x00", "")[:60]
    return None


def refuse_nul_characters(get_response: Callable[[HttpRequest], HttpResponse]):
    """A NUL in a form or query value is refused with a 400 and a message, in one place for every view: the
    database cannot store it (PostgreSQL text and JSON refuse \\x00) and no person types it."""

    def middleware(request: HttpRequest) -> HttpResponse:
        name = _field_with_nul(request.GET)
        if name is None and request.method == "POST":
            name = _field_with_nul(request.POST)
        if name is None:
            return get_response(request)
        reason = NUL_REFUSED.format(name=name)
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
        upload = request.method == "POST" and getattr(request.resolver_match, "url_name", "") == "batch_upload"
        response = render(request, "storage_unavailable.html", {"upload": upload}, status=503)
        response["Retry-After"] = "60"
        return response
