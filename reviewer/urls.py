from django.contrib.auth import views as auth_views
from django.urls import include, path

from reviewer.api import views as api_views
from reviewer.views import audit, auth, batches, doctypes, documents_admin, errors, home, queue, users

urlpatterns = [
    path("", home.home, name="home"),
    path("login/", auth.login, name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("batches/", batches.batch_list, name="batch_list"),
    path("batches/new/", batches.batch_upload, name="batch_upload"),
    path("batches/<int:batch_id>/", batches.batch_detail, name="batch_detail"),
    path("batches/<int:batch_id>/delete/", batches.batch_delete, name="batch_delete"),
    path("documents/<int:document_id>/retry/", documents_admin.document_retry, name="document_retry"),
    path("documents/<int:document_id>/textract/", documents_admin.document_textract, name="document_textract"),
    path("queue/", queue.queue, name="queue"),
    path("audit/", audit.audit_home, name="audit_home"),
    path("users/", users.user_list, name="user_list"),
    path("users/new/", users.user_new, name="user_new"),
    path("users/<int:user_id>/", users.user_edit, name="user_edit"),
    path("users/<int:user_id>/password/", users.user_password, name="user_password"),
    path("types/", doctypes.doctype_list, name="doctype_list"),
    path("types/new/", doctypes.doctype_edit, name="doctype_new"),
    path("types/<slug:name>/", doctypes.doctype_edit, name="doctype_edit"),
    path("types/<slug:name>/yaml/", doctypes.doctype_export, name="doctype_export"),
    path("account/tokens/", api_views.token_list, name="token_list"),
    path("api/v1/", include("reviewer.api.urls")),
    path("webhooks/", include("reviewer.webhooks.urls")),
]

# Pages for people (an upload the multipart parser refused gets the upload page); problems under /api/.
handler400 = errors.bad_request
handler403 = errors.permission_denied
handler404 = errors.page_not_found
handler500 = errors.server_error

# The review desk, with its pages and edits.
urlpatterns += [path("", include("reviewer.urls_desk"))]

# Supervisor audit, batch dashboards, re-runs and exports.
urlpatterns += [path("", include("reviewer.urls_audit"))]

# Field confidence, its calibration and the suspicious-pass threshold.
urlpatterns += [path("", include("reviewer.urls_confidence"))]
