"""URLs of batches: upload, lists, a document's retry, re-runs and exports."""

from django.urls import path

from reviewer.batches import documents_admin, rerun
from reviewer.batches import export_views as export
from reviewer.batches import views as batches

urlpatterns: list = [
    path("batches/", batches.batch_list, name="batch_list"),
    path("batches/new/", batches.batch_upload, name="batch_upload"),
    path("batches/<int:batch_id>/", batches.batch_detail, name="batch_detail"),
    path("batches/<int:batch_id>/delete/", batches.batch_delete, name="batch_delete"),
    path("documents/<int:document_id>/retry/", documents_admin.document_retry, name="document_retry"),
    path("documents/<int:document_id>/textract/", documents_admin.document_textract, name="document_textract"),
    path("batches/<int:batch_id>/rerun/", rerun.batch_rerun, name="batch_rerun"),
    path("batches/<int:batch_id>/export/values.csv", export.values_csv, name="batch_export_values_csv"),
    path("batches/<int:batch_id>/export/values.json", export.values_json, name="batch_export_values_json"),
    path("batches/<int:batch_id>/export/audit-log.csv", export.events_csv, name="batch_export_events_csv"),
    path("batches/<int:batch_id>/export/audit-log.json", export.events_json, name="batch_export_events_json"),
]
