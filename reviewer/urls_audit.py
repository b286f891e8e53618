"""URLs of the audit, dashboards, re-runs and exports."""

urlpatterns: list = []
