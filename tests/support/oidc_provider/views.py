"""The test provider's control endpoint: the tests register clients and people and change their groups here,
as an administrator would in a real provider's console. JSON in, JSON out, and only with the control token."""

from __future__ import annotations

import hmac
import json
import os

from django.contrib.auth.models import Group, User
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from oidc_provider.models import Client, ResponseType, RSAKey

from tests.support.oidc_provider import claims


def _allowed(request: HttpRequest) -> bool:
    return hmac.compare_digest(request.headers.get("X-Control-Token", ""), os.environ["IDP_CONTROL_TOKEN"])


@csrf_exempt
@require_POST
def control(request: HttpRequest, what: str) -> JsonResponse:
    if not _allowed(request):
        return JsonResponse({"error": "forbidden"}, status=403)
    data = json.loads(request.body or b"{}")
    if what == "client":
        client, _ = Client.objects.update_or_create(client_id=data["client_id"], defaults={
            "name": data.get("name", data["client_id"]), "client_type": "confidential",
            "client_secret": data["secret"], "_redirect_uris": "\n".join(data["redirect_uris"]),
            "require_consent": data.get("require_consent", True), "reuse_consent": True, "jwt_alg": "RS256"})
        client.response_types.set(ResponseType.objects.filter(value="code"))
        return JsonResponse({"client_id": client.client_id})
    if what == "user":
        user = User.objects.filter(username=data["username"]).first() or User(username=data["username"])
        user.username = data.get("new_username", user.username)
        user.email = data.get("email", user.email)
        if "password" in data:
            user.set_password(data["password"])
        user.save()
        if "groups" in data:
            user.groups.set([Group.objects.get_or_create(name=name)[0] for name in data["groups"]])
        return JsonResponse({"sub": str(user.pk), "username": user.username})
    if what == "behaviour":
        claims.BEHAVIOUR.update({k: v for k, v in data.items() if k in claims.BEHAVIOUR})
        return JsonResponse(claims.BEHAVIOUR)
    if what == "keys":
        return JsonResponse({"kids": [key.kid for key in RSAKey.objects.all()]})
    return JsonResponse({"error": f"nothing called {what}"}, status=404)
