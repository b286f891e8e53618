"""Every URL, each feature's from its own folder."""

from django.urls import include, path

from reviewer import errors, home
from reviewer.api import views as api_views

urlpatterns = [
    path("", home.home, name="home"),
    path("", include("reviewer.users.urls")),
    path("", include("reviewer.batches.urls")),
    path("", include("reviewer.desk.urls")),
    path("", include("reviewer.audit.urls")),
    path("", include("reviewer.confidence.urls")),
    path("", include("reviewer.types.urls")),
    path("", include("reviewer.evaluation.urls")),
    path("", include("reviewer.teams.urls")),
    path("account/tokens/", api_views.token_list, name="token_list"),
    path("api/v1/", include("reviewer.api.urls")),
    path("webhooks/", include("reviewer.webhooks.urls")),
]

# Pages for people (an upload the multipart parser refused gets the upload page); problems under /api/.
handler400 = errors.bad_request
handler403 = errors.permission_denied
handler404 = errors.page_not_found
handler500 = errors.server_error
