"""URLs of the audit, dashboards, re-runs and exports."""

from django.urls import path

from reviewer.views import audit, dashboard, export, field_audit, rerun

urlpatterns: list = [
    path("audit/batches/<int:batch_id>/", audit.audit_batch, name="audit_batch"),
    path("audit/batches/<int:batch_id>/samples/new/", audit.audit_sample_create, name="audit_sample_create"),
    path("audit/samples/<int:sample_id>/", audit.audit_sample, name="audit_sample"),
    path("audit/samples/<int:sample_id>/items/<int:item_id>/", audit.audit_item, name="audit_item"),
    path("audit/samples/<int:sample_id>/items/<int:item_id>/decide/", audit.audit_item_decide,
         name="audit_item_decide"),
    path("audit/batches/<int:batch_id>/field-samples/new/", field_audit.field_sample_create,
         name="field_sample_create"),
    path("audit/field-samples/<int:sample_id>/", field_audit.field_sample, name="field_sample"),
    path("audit/field-samples/<int:sample_id>/fields/<int:item_id>/", field_audit.field_item, name="field_item"),
    path("audit/field-samples/<int:sample_id>/fields/<int:item_id>/decide/", field_audit.field_item_decide,
         name="field_item_decide"),
    path("batches/<int:batch_id>/dashboard/", dashboard.batch_dashboard_view, name="batch_dashboard"),
    path("batches/<int:batch_id>/rerun/", rerun.batch_rerun, name="batch_rerun"),
    path("batches/<int:batch_id>/export/values.csv", export.values_csv, name="batch_export_values_csv"),
    path("batches/<int:batch_id>/export/values.json", export.values_json, name="batch_export_values_json"),
    path("batches/<int:batch_id>/export/audit-log.csv", export.events_csv, name="batch_export_events_csv"),
    path("batches/<int:batch_id>/export/audit-log.json", export.events_json, name="batch_export_events_json"),
]
