"""URLs of the supervisor's pages: the audit, its samples and the batch dashboard."""

from django.urls import path

from reviewer.audit import dashboard
from reviewer.audit import field_views as field_audit
from reviewer.audit import views as audit

urlpatterns: list = [
    path("audit/", audit.audit_home, name="audit_home"),
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
]
