"""The API: /api/v1/, its OpenAPI document (/api/v1/openapi.json) and interactive docs (/api/v1/docs), served
from this app's static files (django-ninja's Swagger UI, no CDN) to people signed in to the app."""

from __future__ import annotations

from typing import Any

from ninja import NinjaAPI, Swagger

from reviewer.access import role_required
from reviewer.api import errors
from reviewer.api.auth import Roles
from reviewer.api.routers import batches, doctypes, documents, evaluations, review
from reviewer.api.throttle import TokenRateThrottle
from reviewer.roles import ROLES


class ProblemAPI(NinjaAPI):
    """The OpenAPI document says what is served: every error response as application/problem+json."""

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> dict:
        schema = super().get_openapi_schema(*args, **kwargs)
        for item in schema.get("paths", {}).values():
            for operation in item.values():
                for status, response in operation.get("responses", {}).items():
                    content = response.get("content", {})
                    if str(status)[0] in "45" and "application/json" in content:
                        content[errors.PROBLEM] = content.pop("application/json")
        return schema


api = ProblemAPI(
    title="Proofdesk API",
    version="1",
    description="Documents read with proofs, checked by rules, reviewed by people. Authenticate with a token "
                "from the app's API tokens page: `Authorization: Bearer pd_…`. Your roles apply as in the app. "
                "Errors are application/problem+json (RFC 9457).",
    urls_namespace="api",
    auth=Roles(*ROLES),  # each operation names its own roles; this is the floor
    throttle=TokenRateThrottle(),
    docs_decorator=role_required(*ROLES),
    docs=Swagger(settings={"deepLinking": False}),  # a deep link inside each operation's button: nested-interactive
)
errors.install(api)
api.add_router("/doctypes", doctypes.router)
api.add_router("/batches", batches.router)
api.add_router("/documents", documents.router)
api.add_router("/documents", review.router)
api.add_router("", evaluations.router)
