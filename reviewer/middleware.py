"""Responses for a logged-in user are never kept by shared caches (proxies, CDNs)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control


def private_cache_for_users(get_response: Callable[[HttpRequest], HttpResponse]):
    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if request.user.is_authenticated:
            # Keeps what a view chose (max-age, no-store) and adds `private`; no `public` survives.
            patch_cache_control(response, private=True)
        return response

    return middleware
